import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppLogger } from '../../common/logging/logger';
import { sendError, toGatewayException } from './error-response';
import { anthropicErrorBody, speaksAnthropic } from '../../endpoints/messages/anthropic-error-body';
import { sseData } from '../../streaming/sse-writer';

/**
 * The one exception filter: every error leaves the gateway in the shape of the API the route speaks
 * (OpenAI's, or Anthropic's on /v1/messages). A stream whose headers are already out gets a final SSE error
 * event instead.
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
    const anthropic = speaksAnthropic(req.path);
    if (res.headersSent) {
      if (res.writableEnded) return;
      if (anthropic) res.end(`event: error\ndata: ${JSON.stringify(anthropicErrorBody(exception))}\n\n`);
      else res.end(sseData(JSON.stringify(exception.toBody())));
      return;
    }
    sendError(res, exception, anthropic ? anthropicErrorBody(exception, req.ledger?.requestId) : undefined);
  }
}
