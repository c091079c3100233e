import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { clientSource } from '../../common/http/client-source';
import { requestAbortSignal } from '../../common/http/request-abort';
import { writeJson } from '../../common/http/write-json';
import { InFlightTracker } from '../../lifecycle/in-flight.tracker';
import { UsageRecorder } from '../../usage/usage-recorder';
import { MessagesPromptDto, MessagesRequestDto } from './dto/messages-request.dto';
import { MessagesService } from './messages.service';

/**
 * POST /v1/messages and /v1/messages/count_tokens (Anthropic's Messages API). Claude Code adds `?beta=true`;
 * the query is ignored. Errors on these paths are in Anthropic's shape (anthropic-error-body.ts).
 */
@Controller('v1/messages')
export class MessagesController {
  constructor(
    private readonly messages: MessagesService,
    private readonly usage: UsageRecorder,
    private readonly inFlight: InFlightTracker,
  ) {}

  @Post()
  @HttpCode(200)
  async create(@Body() dto: MessagesRequestDto, @Req() req: Request, @Res() res: Response): Promise<void> {
    req.ledger.operation('messages');
    req.ledger.streaming(dto.stream === true);
    res.setHeader('request-id', req.ledger.requestId); // Anthropic's SDKs surface it as the request id
    const signal = requestAbortSignal(req, res, this.inFlight.cutSignal);
    const handling = this.messages
      .create(dto, { source: clientSource(req), headers: req.headers }, req.ledger, res, signal)
      .then((message) => {
        if (message) writeJson(res, message);
      });
    this.usage.hold(req, handling); // the usage record waits for what this request relayed to be counted
    await handling;
  }

  /** Not a billable call (Anthropic does not charge for counting): no usage record, but the team's model access applies. */
  @Post('count_tokens')
  @HttpCode(200)
  async countTokens(
    @Body() dto: MessagesPromptDto,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    res.setHeader('request-id', req.ledger.requestId);
    const signal = requestAbortSignal(req, res, this.inFlight.cutSignal);
    const count = await this.messages.countTokens(
      dto,
      { source: clientSource(req), headers: req.headers },
      req.ledger,
      signal,
    );
    res.setHeader('x-switchyard-token-count', count.estimated ? 'estimated' : 'exact');
    writeJson(res, { input_tokens: count.input_tokens });
  }
}
