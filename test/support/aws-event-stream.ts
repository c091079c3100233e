import { crc32 } from 'node:zlib';

/**
 * AWS's binary event-stream framing written by this test's own code (not @smithy/eventstream-codec, which the
 * gateway decodes with): prelude (total length, headers length, their CRC32), headers (name length, name, type 7 =
 * string with a 2-byte length, value), payload, CRC32 of everything before it. All big-endian.
 */
export function eventStreamFrame(headers: Record<string, string>, payload: Buffer | string): Buffer {
  const headerBytes = Buffer.concat(
    Object.entries(headers).map(([name, value]) => {
      const nameBytes = Buffer.from(name, 'utf8');
      const valueBytes = Buffer.from(value, 'utf8');
      const head = Buffer.alloc(1 + nameBytes.length + 1 + 2);
      head.writeUInt8(nameBytes.length, 0);
      nameBytes.copy(head, 1);
      head.writeUInt8(7, 1 + nameBytes.length);
      head.writeUInt16BE(valueBytes.length, 2 + nameBytes.length);
      return Buffer.concat([head, valueBytes]);
    }),
  );
  const body = Buffer.isBuffer(payload) ? payload : Buffer.from(payload, 'utf8');
  const total = 12 + headerBytes.length + body.length + 4;
  const prelude = Buffer.alloc(12);
  prelude.writeUInt32BE(total, 0);
  prelude.writeUInt32BE(headerBytes.length, 4);
  prelude.writeUInt32BE(crc32(prelude.subarray(0, 8)), 8);
  const withoutCrc = Buffer.concat([prelude, headerBytes, body]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(withoutCrc), 0);
  return Buffer.concat([withoutCrc, crc]);
}

/** An `event` frame as Bedrock sends them (JSON payload). */
export function eventFrame(eventType: string, payload: object): Buffer {
  return eventStreamFrame(
    { ':event-type': eventType, ':content-type': 'application/json', ':message-type': 'event' },
    JSON.stringify(payload),
  );
}

/** An `exception` frame (`{"message": ...}` with its `:exception-type`). */
export function exceptionFrame(exceptionType: string, message: string): Buffer {
  return eventStreamFrame(
    { ':exception-type': exceptionType, ':content-type': 'application/json', ':message-type': 'exception' },
    JSON.stringify({ message }),
  );
}

/**
 * Where to cut a stream of frames into network writes so that cuts fall at awkward places: inside each frame's
 * prelude (after 5 bytes), inside its headers, and inside its message CRC (2 bytes before its end).
 */
export function awkwardSlices(frames: Buffer[]): Buffer[] {
  const slices: Buffer[] = [];
  let carry: Buffer = Buffer.alloc(0);
  for (const frame of frames) {
    const cuts = [5, Math.min(14, frame.length - 3), frame.length - 2].filter(
      (c, i, all) => c > 0 && all.indexOf(c) === i,
    );
    let from = 0;
    for (const cut of cuts) {
      slices.push(Buffer.concat([carry, frame.subarray(from, cut)]));
      carry = Buffer.alloc(0);
      from = cut;
    }
    carry = frame.subarray(from); // the last 2 bytes of the CRC go with the next frame's start
  }
  if (carry.length) slices.push(carry);
  return slices;
}
