import type { IncomingMessage } from 'node:http';
import type { Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { GatewayException } from '../../core/errors/gateway.exception';
import {
  clientStoppedSending,
  isPlainJsonType,
  JsonBodyCollector,
  type ParsedJsonBody,
} from './plain-json-body';

/** The Content-Encodings body-parser inflates, with the same zlib streams. */
const INFLATERS: Record<string, () => Transform> = {
  gzip: createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/**
 * An inflater for a compressed plain JSON body (isPlainJsonType, Content-Encoding gzip, deflate or br); undefined
 * for every other body (the guard reads those with body-parser, which also refuses unknown encodings).
 */
export function inflaterFor(req: IncomingMessage): (() => Transform) | undefined {
  const encoding = req.headers['content-encoding']?.toLowerCase();
  return encoding !== undefined && isPlainJsonType(req) ? INFLATERS[encoding] : undefined;
}

/**
 * Reads a compressed JSON body through its inflater, each inflated chunk counted and scanned as it comes out
 * (JsonBodyCollector), with body-parser's outcomes: 413 once the inflated bytes pass `limit` or hold too many
 * values, 400 for bytes that are not what the Content-Encoding says, 400 for a client that stopped sending.
 * A refused body is not inflated further (a zip bomb costs the gateway what it inflated up to the limit) and
 * never joined into one buffer: before, body-parser inflated a 20 MB body of 650,000 items into one buffer,
 * ~5,000 fresh pages in one turn of the event loop, before the scan could refuse it. As body-parser does, the
 * rest of the request is read to its end before the answer, so the client is not cut off mid-send.
 */
export function readCompressedJson(
  req: IncomingMessage,
  inflater: Transform,
  limit: number,
  tooLarge: () => GatewayException,
): Promise<ParsedJsonBody> {
  return new Promise((resolve, reject) => {
    const collector = new JsonBodyCollector(limit, tooLarge);
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      req.off('error', onGone);
      req.off('close', onClose);
      outcome();
    };
    /** Stops inflating and answers once the client has sent everything (at once when it already has). */
    const stopThenAnswer = (error: GatewayException) => {
      req.unpipe(inflater);
      inflater.removeAllListeners('data');
      inflater.removeAllListeners('end');
      inflater.on('error', () => {}); // what it still had in hand no longer matters
      inflater.destroy();
      if (req.complete) return settle(() => reject(error));
      req.once('end', () => settle(() => reject(error)));
      req.resume();
    };
    const onGone = () => settle(() => reject(clientStoppedSending()));
    const onClose = () => {
      if (!req.complete) onGone();
    };
    inflater.on('data', (chunk: Buffer) => {
      if (!collector.push(chunk)) stopThenAnswer(collector.refused!);
    });
    inflater.on('end', () => settle(() => collector.parse().then(resolve, reject)));
    inflater.once('error', (error: Error) =>
      stopThenAnswer(
        new GatewayException(
          'invalid_request',
          `The request body could not be decoded as its Content-Encoding says: ${error.message}`,
          { wireCode: null },
        ),
      ),
    );
    if (req.destroyed) return onGone(); // gone before the guard got here
    req.on('error', onGone);
    req.on('close', onClose);
    req.pipe(inflater);
  });
}
