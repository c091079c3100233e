import { randomUUID } from 'node:crypto';
import type { Response } from 'express';
import { GatewayException } from './gateway.exception';
import type { ErrorCode } from './error-codes';
import { HttpException } from '@nestjs/common';
import type { Logger } from 'pino';

/** Nest's own HttpExceptions (unknown route, etc.) mapped onto our codes. */
const HTTP_STATUS_TO_CODE: Record<number, ErrorCode> = {
  400: 'invalid_request',
  401: 'invalid_api_key',
  404: 'not_found',
  413: 'request_too_large',
  415: 'unsupported_media_type',
};

/** Any thrown value -> a GatewayException; unknown errors become a 500 carrying only an error id. */
export function toGatewayException(error: unknown, logger?: Logger): GatewayException {
  if (error instanceof GatewayException) return error;
  if (error instanceof HttpException) {
    const status = error.getStatus();
    const code = HTTP_STATUS_TO_CODE[status];
    if (code) return new GatewayException(code, error.message);
  }
  const errorId = randomUUID();
  logger?.error({ err: error, errorId }, 'unhandled error');
  return new GatewayException('internal_error', `The gateway hit an internal error (error id ${errorId}).`);
}

/**
 * Writes the error: OpenAI's body, or `body` when the route speaks another API's shape. A response whose headers
 * went out already is left alone.
 */
export function sendError(
  res: Response,
  exception: GatewayException,
  body: object = exception.toBody(),
): void {
  if (res.headersSent) return;
  res.status(exception.status);
  for (const [name, value] of Object.entries(exception.headers)) res.setHeader(name, value);
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(body));
}
