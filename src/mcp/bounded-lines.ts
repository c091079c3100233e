import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';

/** The longest line of a local server's stderr the gateway holds (characters): longer ones are logged cut. */
export const MAX_LINE_CHARS = 8192;

/**
 * Calls `onLine` with each line of `input` (without its `\n` or `\r\n`), holding at most `maxChars` of a line: a
 * line that grows past it (a server printing without newlines) is passed on cut, ending in `…`, as soon as it does,
 * and the rest of it is dropped up to the next newline. readline would hold the whole line in memory, unbounded.
 * A last line without a newline is passed on when the stream ends.
 */
export function onBoundedLines(
  input: Readable,
  onLine: (line: string) => void,
  maxChars = MAX_LINE_CHARS,
): void {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  let dropping = false;
  const take = (text: string) => {
    const parts = text.split('\n');
    const rest = parts.pop()!;
    for (const part of parts) {
      if (dropping) dropping = false;
      else emit(pending + part);
      pending = '';
    }
    if (dropping) return;
    pending += rest;
    if (pending.length > maxChars) {
      onLine(`${pending.slice(0, maxChars)}…`);
      pending = '';
      dropping = true;
    }
  };
  const emit = (line: string) => {
    const text = line.endsWith('\r') ? line.slice(0, -1) : line;
    onLine(text.length > maxChars ? `${text.slice(0, maxChars)}…` : text);
  };
  input.on('data', (chunk: Buffer | string) =>
    take(typeof chunk === 'string' ? chunk : decoder.write(chunk)),
  );
  input.on('end', () => {
    take(decoder.end());
    if (pending && !dropping) emit(pending);
    pending = '';
  });
}
