import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppLogger } from '../common/logging/logger';
import { sendError, toGatewayException } from '../core/errors/error-response';
import { errorShapeAt } from './endpoints';

/**
 * The one exception filter: every error leaves the gateway in the shape of the endpoint its path belongs to
 * (its spec's `errors`: OpenAI's, or Anthropic's on /v1/messages*), JSON-RPC's under /mcp, OpenAI's elsewhere. A stream whose headers
 * are already out gets the endpoint's final in-band error event instead.
 */
@Catch()
export class EndpointErrorFilter implements ExceptionFilter {
  constructor(private readonly logger: AppLogger) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const res = http.getResponse<Response>();
    const req = http.getRequest<Request>();
    // The client left and the upstream call was aborted for it: nothing to answer, nothing to log.
    if (req.exchange?.aborted) return;
    const exception = toGatewayException(error, this.logger.pino);
    // The error the request ended in: the exchange's outcome for every request, the pipeline's or not.
    req.exchange?.failed(exception.wireCode ?? exception.code);
    const errors = errorShapeAt(req.path);
    if (res.headersSent) {
      if (!res.writableEnded) res.end(errors.streamEvent(exception));
      return;
    }
    sendError(res, exception, errors.body(exception, req.exchange?.requestId));
  }
}
