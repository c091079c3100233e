import { PassThrough } from 'node:stream';
import { onBoundedLines } from '../../src/mcp/bounded-lines';

describe("a local MCP server's stderr, line by line, bounded", () => {
  it('passes on lines split across chunks, without their \\n or \\r\\n, and the last one at the end', async () => {
    const input = new PassThrough();
    const lines: string[] = [];
    onBoundedLines(input, (line) => lines.push(line), 16);
    input.write('one\r\ntw');
    input.write('o\n\nthree');
    const ended = new Promise((resolve) => input.on('end', resolve));
    input.end();
    await ended;
    expect(lines).toEqual(['one', 'two', '', 'three']);
  });

  it('a line without a newline is passed on cut as soon as it outgrows the cap, the rest dropped up to the newline', () => {
    const input = new PassThrough();
    const lines: string[] = [];
    onBoundedLines(input, (line) => lines.push(line), 16);
    for (let i = 0; i < 1000; i++) input.write('x'.repeat(100));
    // Cut without waiting for a newline that may never come: nothing of it is held.
    expect(lines).toEqual([`${'x'.repeat(16)}…`]);
    input.write('still the same line\nnext line\n');
    input.write(`${'y'.repeat(20)}\n`);
    input.end();
    expect(lines).toEqual([`${'x'.repeat(16)}…`, 'next line', `${'y'.repeat(16)}…`]);
  });
});
