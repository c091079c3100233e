import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import express, { type Request, type RequestHandler, type Response } from 'express';
import { GatewayConfig } from '../../config/config.schema';
import { GatewayException } from '../errors/gateway.exception';
import { toGatewayException } from '../errors/error-response';
import { AppLogger } from '../logging/logger';
import { speaksAnthropic } from '../errors/anthropic-error-body';
import { isPlainJson, readPlainJson } from './plain-json-body';
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
 * JSON bodies nest at most this deep. Nothing in an OpenAI request comes near it (a JSON schema in
 * `response_format` or a tool's parameters is a few dozen levels), while the validation that follows recurses
 * per level: a body nested ~1,500 arrays deep overflowed the stack there (a 500).
 */
export const MAX_BODY_DEPTH = 128;

/**
 * Reads and parses the JSON body, after authentication: a global guard registered after the AuthGuard, so a
 * caller without valid credentials gets 401 without the gateway reading, inflating or parsing a byte of what it
 * sent (before, bodies were parsed in front of Nest and an anonymous caller could make the gateway inflate
 * gzip or parse megabytes). Every failure is an OpenAI error: 400 (not JSON, not decodable, nested too deep),
 * 413 (over `server.maxBodyBytes`) or 415 (not JSON at all). The usual body (plain UTF-8 JSON) is read by
 * plain-json-body.ts; compressed bodies, other charsets and `application/*+json` by body-parser.
 */
@Injectable()
export class BodyReaderGuard implements CanActivate {
  private readonly parse: RequestHandler;

  constructor(
    private readonly config: GatewayConfig,
    private readonly logger: AppLogger,
  ) {
    this.parse = express.json({
      limit: config.server.maxBodyBytes,
      type: ['application/json', 'application/*+json'],
      // Bytes in another charset (UTF-16...) are not what an upstream reads as JSON: those bodies are re-serialised.
      verify: (req, _res, bytes, encoding) => {
        heapGrowth.noteBody(bytes.length);
        if (encoding === 'utf-8' && forwardsClientBytes((req as Request).path)) (req as Request).rawBody = bytes;
      },
    });
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const req = http.getRequest<Request>();
    if (!hasBody(req)) return true;
    if (isPlainJson(req)) {
      const { body, bytes } = await readPlainJson(req, this.config.server.maxBodyBytes, () => this.tooLarge());
      req.body = body;
      heapGrowth.noteBody(bytes.length);
      if (forwardsClientBytes(req.path)) req.rawBody = bytes;
    } else await this.parseWithBodyParser(req, http.getResponse<Response>());
    if (depthExceeds(req.body, MAX_BODY_DEPTH)) {
      throw new GatewayException('invalid_json', `The request body nests JSON more than ${MAX_BODY_DEPTH} levels deep.`);
    }
    return true;
  }

  /** Every other body: compressed, another charset or media type (`application/*+json`). */
  private async parseWithBodyParser(req: Request, res: Response): Promise<void> {
    if (!req.is(['application/json', 'application/*+json'])) {
      throw new GatewayException('unsupported_media_type', 'Request bodies must be JSON (Content-Type: application/json).');
    }
    await new Promise<void>((resolve, reject) => this.parse(req, res, (error?: unknown) => (error ? reject(this.parseError(error)) : resolve())));
  }

  private tooLarge(): GatewayException {
    return new GatewayException('request_too_large', `The request body is larger than ${this.config.server.maxBodyBytes} bytes (server.maxBodyBytes).`);
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
        return new GatewayException('invalid_request', 'The client stopped sending the request body.', { wireCode: null });
    }
    // zlib's own errors for a Content-Encoding the body does not match (body-parser gives them a 4xx status).
    if (typeof failure.status === 'number' && failure.status >= 400 && failure.status < 500) {
      return new GatewayException('invalid_request', `The request body could not be decoded as its Content-Encoding says: ${failure.message}`, { wireCode: null });
    }
    return toGatewayException(error, this.logger.pino);
  }
}

/** Routes whose body may reach an upstream as the client's bytes (messages/native-body.ts, providers/shared/json-splice.ts). */
function forwardsClientBytes(path: string): boolean {
  return path === '/v1/chat/completions' || speaksAnthropic(path);
}

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** True when `value` nests objects/arrays deeper than `limit`. Iterative, so no input can overflow the stack. */
export function depthExceeds(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node as Record<string, unknown>)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}
