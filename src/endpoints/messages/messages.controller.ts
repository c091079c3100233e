import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Pipeline } from '../../gateway/pipeline';
import { MessagesPromptDto, MessagesRequestDto } from './dto/messages-request.dto';
import { countTokensEndpoint, messagesEndpoint } from './messages.endpoint';

/** POST /v1/messages and /v1/messages/count_tokens (Anthropic's Messages API). */
@Controller('v1/messages')
export class MessagesController {
  constructor(private readonly pipeline: Pipeline) {}

  @Post()
  @HttpCode(200)
  create(@Body() dto: MessagesRequestDto, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.pipeline.serve(messagesEndpoint, dto, req, res);
  }

  @Post('count_tokens')
  @HttpCode(200)
  countTokens(@Body() dto: MessagesPromptDto, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.pipeline.serve(countTokensEndpoint, dto, req, res);
  }
}
