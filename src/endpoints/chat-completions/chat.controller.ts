import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Pipeline } from '../../gateway/pipeline';
import { chatCompletionsEndpoint } from './chat-completions.endpoint';
import { ChatCompletionRequestDto } from './dto/chat-completion-request.dto';

/**
 * POST /v1/chat/completions. `@Res()`: a stream owns the socket, and Nest's Express adapter would `send()` after
 * a passthrough handler that returns nothing; the pipeline writes both kinds of answer.
 */
@Controller('v1/chat')
export class ChatController {
  constructor(private readonly pipeline: Pipeline) {}

  @Post('completions')
  @HttpCode(200)
  create(@Body() dto: ChatCompletionRequestDto, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.pipeline.serve(chatCompletionsEndpoint, dto, req, res);
  }
}
