import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Pipeline } from '../../gateway/pipeline';
import { EmbeddingRequestDto } from './dto/embedding-request.dto';
import { embeddingsEndpoint } from './embeddings.endpoint';

/** POST /v1/embeddings (OpenAI's shape). */
@Controller('v1/embeddings')
export class EmbeddingsController {
  constructor(private readonly pipeline: Pipeline) {}

  @Post()
  @HttpCode(200)
  create(@Body() dto: EmbeddingRequestDto, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.pipeline.serve(embeddingsEndpoint, dto, req, res);
  }
}
