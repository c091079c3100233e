import type { StreamStep } from '../stream-events';
import type { UpstreamBody } from '../upstream-client';

/**
 * A local request's answer, filled by the client as its worker reports: a stream's steps (chat chunks, handed to
 * the relay as they are: no JSON or SSE text in between), or the whole answer as an object (`json()`). The rest of
 * the gateway reads it like any backend's body: through LocalAdapter.decodeStream, or whole.
 */
export class LocalAnswer implements UpstreamBody {
  private queued: StreamStep[] = [];
  private whole?: unknown;
  private ended = false;
  private failure?: { error: unknown };
  private wake?: () => void;

  /** One stream step, as the worker's message made it. */
  step(step: StreamStep): void {
    this.queued.push(step);
    this.notify();
  }

  /** The whole answer (a chat completion, an embeddings list), which ends it. */
  complete(answer: unknown): void {
    this.whole = answer;
    this.end();
  }

  end(): void {
    this.ended = true;
    this.notify();
  }

  /** Ends it with an error (the worker failed or crashed; the client left: an AbortedWithUsage). */
  fail(error: unknown): void {
    if (this.ended) return;
    this.failure = { error };
    this.end();
  }

  /** The steps in batches: whatever the worker reported since the relay last read (each one turn's messages). */
  async *steps(): AsyncGenerator<StreamStep[]> {
    for (;;) {
      if (this.queued.length) {
        const batch = this.queued;
        this.queued = [];
        yield batch;
        continue;
      }
      if (this.failure) throw this.failure.error;
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  async json(): Promise<unknown> {
    while (!this.ended) await new Promise<void>((resolve) => (this.wake = resolve));
    if (this.failure) throw this.failure.error;
    return this.whole;
  }

  async text(): Promise<string> {
    return JSON.stringify(await this.json());
  }

  /** Never bytes: a local answer is events or an object (the local family's decoder reads `steps`). */
  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    throw new TypeError('A local answer is read as steps (LocalAdapter.decodeStream) or whole (json()).');
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
