import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { requestAbortSignal } from '../../common/http/request-abort';
import { writeJson } from '../../common/http/write-json';
import { InFlightTracker } from '../../lifecycle/in-flight.tracker';
import { UsageRecorder } from '../../usage/usage-recorder';
import { EmbeddingRequestDto } from './dto/embedding-request.dto';
import { EmbeddingsService } from './embeddings.service';

/** POST /v1/embeddings (OpenAI's shape). Accounted like chat: one usage record per request, `endpoint: embeddings`. */
@Controller('v1/embeddings')
export class EmbeddingsController {
  constructor(
    private readonly embeddings: EmbeddingsService,
    private readonly usage: UsageRecorder,
    private readonly inFlight: InFlightTracker,
  ) {}

  @Post()
  @HttpCode(200)
  async create(@Body() dto: EmbeddingRequestDto, @Req() req: Request, @Res() res: Response): Promise<void> {
    req.ledger.operation('embeddings');
    req.ledger.streaming(false);
    const signal = requestAbortSignal(req, res, this.inFlight.cutSignal);
    const handling = this.embeddings
      .embed(dto, req.ledger, res, signal)
      .then((reply) => writeJson(res, reply));
    this.usage.hold(req, handling); // the usage record waits for the handler to have counted
    await handling;
  }
}
