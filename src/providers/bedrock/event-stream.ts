import { crc32 } from 'node:zlib';
import { EventStreamCodec, type Message } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';

/** A frame's prelude: total length, headers length (4 bytes each, big-endian) and their CRC32. */
const PRELUDE_BYTES = 12;
/** The smallest frame: prelude + the message CRC32, no headers or payload. */
const MIN_FRAME_BYTES = 16;
/** AWS's event-stream limit on one message (16 MB of payload plus headers); anything larger is corruption. */
const MAX_FRAME_BYTES = 16 * 1024 * 1024 + 128 * 1024 + MIN_FRAME_BYTES;

/** A decoded frame: its headers as strings (Bedrock sends only string headers) and its payload. */
export interface EventFrame {
  headers: Record<string, string>;
  payload: Uint8Array;
}

/**
 * AWS's binary event-stream framing (`application/vnd.amazon.eventstream`), as it arrives in network reads that cut
 * frames anywhere (inside a prelude, a header, a CRC): bytes are buffered until the prelude's total length is
 * there, then the whole frame is decoded by @smithy/eventstream-codec (headers, both CRC32s). The prelude's own
 * CRC is checked as soon as its 12 bytes are in, so a corrupt length cannot make the decoder wait for bytes that
 * never come. Any corruption throws: the stream is unreadable past it.
 */
export class EventStreamFrames {
  private readonly codec = new EventStreamCodec(toUtf8, fromUtf8);
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  /** The frames completed by `bytes` (none while a frame is still incomplete). */
  push(bytes: Uint8Array): EventFrame[] {
    if (bytes.byteLength === 0) return [];
    this.pending.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    this.pendingBytes += bytes.byteLength;
    const frames: EventFrame[] = [];
    for (;;) {
      if (this.pendingBytes < PRELUDE_BYTES) break;
      const buffer = this.joined();
      const total = checkedLength(buffer);
      if (buffer.byteLength < total) break;
      frames.push(this.decode(buffer.subarray(0, total)));
      const rest = buffer.subarray(total);
      this.pending = rest.byteLength ? [rest] : [];
      this.pendingBytes = rest.byteLength;
    }
    return frames;
  }

  /** Bytes of a frame begun and not finished (at the body's end: a stream cut inside a frame). */
  get incomplete(): boolean {
    return this.pendingBytes > 0;
  }

  private joined(): Buffer {
    if (this.pending.length > 1) this.pending = [Buffer.concat(this.pending, this.pendingBytes)];
    return this.pending[0];
  }

  private decode(frame: Buffer): EventFrame {
    const message: Message = this.codec.decode(frame);
    const headers: Record<string, string> = {};
    for (const [name, header] of Object.entries(message.headers)) headers[name] = String(header.value);
    return { headers, payload: message.body };
  }
}

/** The frame's total length, once its prelude's CRC32 matches and the length is one a frame can have. */
function checkedLength(buffer: Buffer): number {
  const total = buffer.readUInt32BE(0);
  const headers = buffer.readUInt32BE(4);
  if (crc32(buffer.subarray(0, 8)) !== buffer.readUInt32BE(8))
    throw new EventStreamError('the prelude checksum does not match its bytes');
  if (total < MIN_FRAME_BYTES || total > MAX_FRAME_BYTES || headers > total - MIN_FRAME_BYTES)
    throw new EventStreamError(`a frame length of ${total} bytes (headers ${headers}) is impossible`);
  return total;
}

export class EventStreamError extends Error {
  constructor(what: string) {
    super(`Malformed AWS event stream: ${what}.`);
    this.name = 'EventStreamError';
  }
}
