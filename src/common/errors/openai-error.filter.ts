import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppLogger } from '../logging/logger';
import { sendError, toGatewayException } from './error-response';
import { writeSseError } from '../../streaming/sse-writer';

/**
 * The one exception filter: every error leaves the gateway in OpenAI's shape.
 * A stream whose headers are already out gets a final SSE error event instead.
 */
@Catch()
export class OpenAIErrorFilter implements ExceptionFilter {
  constructor(private readonly logger: AppLogger) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const res = http.getResponse<Response>();
    const req = http.getRequest<Request>();
    // The client left and the upstream call was aborted for it: nothing to answer, nothing to log.
    if (req.ledger?.aborted) return;
    const exception = toGatewayException(error, this.logger.pino);
    req.ledger?.failed(exception.wireCode ?? exception.code);
    if (res.headersSent) {
      if (!res.writableEnded) writeSseError(res, exception);
      return;
    }
    sendError(res, exception);
  }
}
