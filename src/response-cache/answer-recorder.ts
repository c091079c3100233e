import type { StreamEncoder } from '../streaming/stream-encoder';

/**
 * The bytes of one answer, kept as they go to the client, up to `maxBytes`: past it nothing more is kept (the
 * answer will not be stored), so a recorded stream holds at most its model's `maxEntryBytes`.
 */
export class AnswerRecorder {
  private parts: string[] = [];
  private bytes = 0;
  private over = false;

  constructor(private readonly maxBytes: number) {}

  add(text: string): void {
    if (this.over || text === '') return;
    this.bytes += Buffer.byteLength(text);
    if (this.bytes > this.maxBytes) {
      this.over = true;
      this.parts = [];
    } else this.parts.push(text);
  }

  /** More than `maxBytes` went to the client. */
  get tooLarge(): boolean {
    return this.over;
  }

  get text(): string {
    return this.parts.join('');
  }
}

/**
 * `inner`, with every byte of a stream it writes recorded: its events and closing events (an error event is not
 * recorded: such a stream is never stored). Keep-alive comments, which the relay writes beside the encoder, are
 * not part of the answer.
 */
export function recordingEncoder(inner: StreamEncoder, recorder: AnswerRecorder): StreamEncoder {
  return {
    event: (event, step) => {
      const text = inner.event(event, step);
      recorder.add(text);
      return text;
    },
    end: (end) => {
      const text = inner.end(end);
      recorder.add(text);
      return text;
    },
    error: (exception) => inner.error(exception),
  };
}
