/** How a request ended, as its usage record and its request log entry say. */
export type UsageOutcome = 'ok' | 'error' | 'aborted' | 'rejected';
export const USAGE_OUTCOMES: readonly UsageOutcome[] = ['ok', 'error', 'aborted', 'rejected'];

/**
 * One call a request made to a deployment, or a candidate passed over before any call: what the exchange keeps of
 * its attempts (gateway/upstream-caller.ts makes them) and the request log shows (docs/request-log.md). Here, in the
 * shared vocabulary, because the console's page reads the same shape.
 */
export type AttemptRecord =
  | {
      kind: 'call';
      /** The configured model the call was for (a fallback's name when it was one). */
      model: string;
      /** The deployment: `<backend>/<upstream model>`. */
      deployment: string;
      /** `ok`, or the gateway error code it ended in. */
      outcome: string;
      /** The upstream's HTTP status, when it answered at all. */
      status: number | null;
      /** From the call's start (after any backoff) to its answer's headers or its failure. */
      durationMs: number;
      /** What went wrong, in the gateway's words (the vendor's quoted where it said something); null when ok. */
      error: string | null;
    }
  | { kind: 'skipped'; model: string; deployment: string; reason: string };
