import type { UpstreamBody } from '../upstream-client';

/**
 * A response body the local client writes into as the worker generates: readable as a byte
 * stream (SSE, for the relay) or whole (`json()`), like an HTTP body, so everything after the
 * client (adapter, relay, accounting) is the same code as for remote backends.
 */
export class PushBody implements UpstreamBody {
  private readonly chunks: Uint8Array[] = [];
  private ended = false;
  private failure?: unknown;
  private wake?: () => void;
  private readonly encoder = new TextEncoder();

  push(text: string): void {
    this.chunks.push(this.encoder.encode(text));
    this.notify();
  }

  end(): void {
    this.ended = true;
    this.notify();
  }

  fail(error: unknown): void {
    if (this.ended) return;
    this.failure = error;
    this.ended = true;
    this.notify();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    for (;;) {
      while (this.chunks.length) yield this.chunks.shift()!;
      if (this.failure !== undefined) throw this.failure;
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  async text(): Promise<string> {
    const decoder = new TextDecoder();
    let text = '';
    for await (const bytes of this) text += decoder.decode(bytes, { stream: true });
    return text + decoder.decode();
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
