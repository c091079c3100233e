import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import express, { type Request, type RequestHandler, type Response } from 'express';
import { TextDecoder } from 'node:util';
import { GatewayConfig } from '../../config/config.schema';
import { GatewayException } from '../../core/errors/gateway.exception';
import { toGatewayException } from '../../core/errors/error-response';
import { AppLogger } from '../logging/logger';
import { endpointAt } from '../../endpoints/endpoints';
import { noteBodyShape } from './json-shape';
import { isPlainJson, parseJsonBytes, readPlainJson, type ParsedJsonBody } from './plain-json-body';
import { inflaterFor, readCompressedJson } from './compressed-json-body';
import { heapGrowth } from '../../lifecycle/heap-growth';

declare module 'express-serve-static-core' {
  interface Request {
    /**
     * The body's bytes as received (UTF-8 JSON), kept only on routes that may forward them: Messages requests to
     * an Anthropic backend, chat completions to an OpenAI-compatible one (providers/shared/json-splice.ts).
     */
    rawBody?: Buffer;
  }
}

/**
 * Reads and parses the JSON body, after authentication: a global guard registered after the AuthGuard, so a
 * caller without valid credentials gets 401 without the gateway reading, inflating or parsing a byte of what it
 * sent (before, bodies were parsed in front of Nest and an anonymous caller could make the gateway inflate
 * gzip or parse megabytes). Every failure is a client error in the route's shape: 400 (not JSON, not decodable,
 * nested more than MAX_BODY_DEPTH levels), 413 (over `server.maxBodyBytes`, or more than MAX_BODY_VALUES JSON
 * values: json-shape.ts) or 415 (not JSON at all). The usual body (plain UTF-8 JSON) is read and scanned as it
 * arrives by plain-json-body.ts, and the same compressed (gzip, deflate, br) as it is inflated by
 * compressed-json-body.ts; other charsets and `application/*+json` (and unknown encodings, which it refuses) are
 * read by body-parser's raw reader, then scanned and parsed the same way, a slice per turn of the event loop.
 */
@Injectable()
export class BodyReaderGuard implements CanActivate {
  /** body-parser's reader: the body's bytes, inflated as its Content-Encoding says, at most maxBodyBytes of them. */
  private readonly readRaw: RequestHandler;

  constructor(
    private readonly config: GatewayConfig,
    private readonly logger: AppLogger,
  ) {
    this.readRaw = express.raw({ limit: config.server.maxBodyBytes, type: () => true });
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const req = http.getRequest<Request>();
    if (!hasBody(req)) return true;
    const plain = isPlainJson(req);
    const inflater = plain ? undefined : inflaterFor(req);
    const limit = this.config.server.maxBodyBytes;
    const { body, bytes, values } = plain
      ? await readPlainJson(req, limit, () => this.tooLarge())
      : inflater
        ? await readCompressedJson(req, inflater(), limit, () => this.tooLarge())
        : await this.readWithBodyParser(req, http.getResponse<Response>());
    req.body = body;
    noteBodyShape(body, { values, bytes: bytes.length });
    heapGrowth.noteBody(bytes.length);
    // Bytes in another charset (UTF-16...) are not what an upstream reads as JSON: those bodies are re-serialised.
    if (forwardsClientBytes(req.path) && (plain || charsetOf(req) === 'utf-8')) req.rawBody = bytes;
    return true;
  }

  /** Every other body: another charset or media type (`application/*+json`), or an encoding it refuses. */
  private async readWithBodyParser(req: Request, res: Response): Promise<ParsedJsonBody> {
    if (!req.is(['application/json', 'application/*+json'])) {
      throw new GatewayException(
        'unsupported_media_type',
        'Request bodies must be JSON (Content-Type: application/json).',
      );
    }
    // As body-parser's json(): only the UTF encodings JSON allows, refused before a byte is read.
    const charset = charsetOf(req);
    const decoder = charset === 'utf-8' ? undefined : textDecoderFor(charset);
    if (charset !== 'utf-8' && !decoder)
      throw new GatewayException('unsupported_media_type', `unsupported charset "${charset.toUpperCase()}"`);
    await new Promise<void>((resolve, reject) =>
      this.readRaw(req, res, (error?: unknown) => (error ? reject(this.parseError(error)) : resolve())),
    );
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    if (!decoder) return parseJsonBytes(raw);
    // Another UTF encoding: decoded, then scanned and parsed as UTF-8 like every other body.
    return parseJsonBytes(Buffer.from(decoder.decode(raw), 'utf8'));
  }

  private tooLarge(): GatewayException {
    return new GatewayException(
      'request_too_large',
      `The request body is larger than ${this.config.server.maxBodyBytes} bytes (server.maxBodyBytes).`,
    );
  }

  private parseError(error: unknown): GatewayException {
    const failure = error as Error & { type?: string; status?: number };
    switch (failure.type) {
      case 'entity.parse.failed':
        return new GatewayException('invalid_json', `The request body is not valid JSON: ${failure.message}`);
      case 'entity.too.large':
        return this.tooLarge();
      case 'encoding.unsupported':
      case 'charset.unsupported':
        return new GatewayException('unsupported_media_type', failure.message);
      case 'request.aborted':
        return new GatewayException('invalid_request', 'The client stopped sending the request body.', {
          wireCode: null,
        });
    }
    // zlib's own errors for a Content-Encoding the body does not match (body-parser gives them a 4xx status).
    if (typeof failure.status === 'number' && failure.status >= 400 && failure.status < 500) {
      return new GatewayException(
        'invalid_request',
        `The request body could not be decoded as its Content-Encoding says: ${failure.message}`,
        { wireCode: null },
      );
    }
    return toGatewayException(error, this.logger.pino);
  }
}

/** Routes whose body may reach an upstream as the client's bytes (messages/native-body.ts, core/json-splice.ts). */
function forwardsClientBytes(path: string): boolean {
  return endpointAt(path)?.keepsClientBytes === true;
}

/** The Content-Type's charset, lower-cased; utf-8 when it names none (JSON's default). */
function charsetOf(req: Request): string {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(req.headers['content-type'] ?? '');
  return match ? match[1].toLowerCase() : 'utf-8';
}

/** A decoder for another UTF encoding JSON may come in (UTF-16 with or without its byte order); none for the rest. */
function textDecoderFor(charset: string): TextDecoder | undefined {
  if (!charset.startsWith('utf-') || charset === 'utf-8') return undefined;
  try {
    return new TextDecoder(charset);
  } catch {
    return undefined; // utf-32, utf-7: Node's TextDecoder does not read them
  }
}

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
