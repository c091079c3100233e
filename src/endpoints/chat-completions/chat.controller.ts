import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { clientSource } from '../../common/http/client-source';
import { requestAbortSignal } from '../../common/http/request-abort';
import { writeJson } from '../../common/http/write-json';
import { InFlightTracker } from '../../lifecycle/in-flight.tracker';
import { UsageRecorder } from '../../usage/usage-recorder';
import { ChatService } from '../../gateway/chat.service';
import { chatCompletionsWire } from '../../gateway/client-wire';
import { ChatCompletionRequestDto } from './dto/chat-completion-request.dto';

/**
 * POST /v1/chat/completions. The handler takes `@Res()` because the streaming
 * branch owns the socket; the non-streaming branch still gets a plain object from
 * the service and only serialises it.
 */
@Controller('v1/chat')
export class ChatController {
  constructor(
    private readonly chat: ChatService,
    private readonly usage: UsageRecorder,
    private readonly inFlight: InFlightTracker,
  ) {}

  @Post('completions')
  @HttpCode(200)
  async create(
    @Body() dto: ChatCompletionRequestDto,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const handling = this.handle(dto, req, res);
    this.usage.hold(req, handling); // the usage record waits for what this request relayed to be counted
    await handling;
  }

  private async handle(dto: ChatCompletionRequestDto, req: Request, res: Response): Promise<void> {
    req.ledger.operation('chat.completions');
    req.ledger.streaming(dto.stream === true);
    const signal = requestAbortSignal(req, res, this.inFlight.cutSignal);
    const wire = chatCompletionsWire(dto, clientSource(req));
    if (dto.stream === true) {
      await this.chat.stream(dto, wire, req.ledger, res, signal);
      return;
    }
    const { completion } = await this.chat.complete(dto, wire, req.ledger, res, signal);
    writeJson(res, completion);
  }
}
