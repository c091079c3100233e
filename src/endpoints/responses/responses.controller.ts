import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { GatewayValidationPipe } from '../../common/validation/validation.pipe';
import { Pipeline } from '../../gateway/pipeline';
import { InputItemsQueryDto } from './dto/input-items-query.dto';
import { asItemResource } from './input-item-resource';
import { ResponsesRequestDto } from './dto/responses-request.dto';
import { ResponsesService } from './responses.service';

// eslint-disable-next-line no-useless-assignment -- used by a parameter decorator below, which the rule does not see
const strict = new GatewayValidationPipe({ strict: true });

/**
 * OpenAI's Responses API: POST /v1/responses (accounted like chat), and the stored responses of the caller's
 * own team: GET and DELETE /v1/responses/{id}, GET /v1/responses/{id}/input_items.
 */
@Controller('v1/responses')
export class ResponsesController {
  constructor(
    private readonly pipeline: Pipeline,
    private readonly responses: ResponsesService,
  ) {}

  @Post()
  @HttpCode(200)
  create(@Body() dto: ResponsesRequestDto, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.pipeline.serve(this.responses.endpoint, dto, req, res);
  }

  @Get(':id')
  async retrieve(@Param('id') id: string, @Req() req: Request): Promise<Record<string, unknown>> {
    return this.responses.retrieve(req.exchange.caller.teamId, id);
  }

  @Delete(':id')
  async delete(@Param('id') id: string, @Req() req: Request): Promise<Record<string, unknown>> {
    await this.responses.delete(req.exchange.caller.teamId, id);
    return { id, object: 'response', deleted: true };
  }

  @Get(':id/input_items')
  async inputItems(
    @Param('id') id: string,
    @Query(strict) query: InputItemsQueryDto,
    @Req() req: Request,
  ): Promise<Record<string, unknown>> {
    const items = await this.responses.inputItems(req.exchange.caller.teamId, id);
    const ordered = query.order === 'asc' ? items : [...items].reverse();
    const start = query.after ? ordered.findIndex((item) => item.id === query.after) + 1 : 0;
    const limit = query.limit ?? 20;
    const data = ordered.slice(start, start + limit).map(asItemResource);
    // OpenAI's ResponseItemList has first_id and last_id as required strings: an empty page has "" (no item to name).
    return {
      object: 'list',
      data,
      first_id: String(data[0]?.id ?? ''),
      last_id: String(data.at(-1)?.id ?? ''),
      has_more: start + limit < ordered.length,
    };
  }
}
