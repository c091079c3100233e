import type { AttemptRecord, UsageOutcome } from '../core/request-outcome';

/** An attempt as the log keeps it (its error redacted). */
export type LoggedAttempt = AttemptRecord;

/** The tokens of the request, as its usage record counts them. */
export interface LoggedUsage {
  prompt: number;
  completion: number;
  reasoning: number;
  /** Prompt tokens read from the backend's cache. */
  cached: number;
  /** Prompt tokens written to the backend's cache, and the 1-hour part of them (docs/accounting.md). */
  cacheWrite: number;
  cacheWrite1h: number;
  /** Worked out by the gateway's tokenizer rather than reported by the upstream. */
  estimated: boolean;
}

/**
 * One request, as the request log keeps it (docs/request-log.md): who sent it, where it went, every attempt, how
 * it ended, what it used and cost. Written once, when the request has ended (a stream at its end).
 */
export interface RequestLogEntry {
  /** The request's usage record id: unique (a client may choose its request id), the same in the usage stream. */
  id: string;
  /** The request id (X-Request-Id). */
  requestId: string;
  /** When the request arrived (ISO 8601, milliseconds, UTC). */
  at: string;
  team: string;
  token: { id: string; name: string | null };
  /** The person the token belongs to, when a person issued it for themselves (`owner`); null for a team token. */
  person: { subject: string; email?: string } | null;
  /** The API: chat.completions, messages, responses, embeddings. */
  endpoint: string;
  stream: boolean;
  /** The model asked for (the body's `model`, cut to 256 characters; `-` when it named none). */
  model: string;
  /** The configured model that answered (a fallback's name when one did); empty when none did. */
  servedModel: string;
  /** The deployment that answered, or was tried last when none did: `<backend>/<upstream model>`; null if none. */
  deployment: string | null;
  attempts: LoggedAttempt[];
  /** The HTTP status the client got (200 for a stream, even one that failed midway). */
  status: number;
  outcome: UsageOutcome;
  /** The error code the client got (in its API's words), null when none. */
  errorCode: string | null;
  latencyMs: number;
  /** Time to the first token (streams) or to the upstream's answer; null when no upstream answered. */
  ttfbMs: number | null;
  usage: LoggedUsage;
  /** In nano-units of the billing currency; null when the model's price is unknown. */
  costNanos: number | null;
  /** The W3C trace id the request belongs to (32 hex digits), null when it came with none and tracing is off. */
  traceId: string | null;
  /** The client's address (its proxy's when the proxy is not configured as trusted: server.trustedProxies). */
  clientAddress: string | null;
  /** Whether its content is kept (the team's `logging.content: full`); the content itself is stored apart. */
  contentKept: boolean;
  /** Answered from the response cache (docs/response-cache.md): no deployment, no attempts, cost 0. */
  cacheHit: boolean;
}

/** What was sent and answered, redacted: kept apart from the entry, with a retention of its own. */
export interface RequestLogContent {
  /** The request body as the client sent it (redacted). */
  request: unknown;
  /** The answer: the messages of a whole answer, or the text a stream relayed (redacted); null when none came. */
  response: unknown;
}

/** An entry with its content, as the writer hands it to a store. */
export interface RequestLogRecord {
  entry: RequestLogEntry;
  content?: RequestLogContent;
}
