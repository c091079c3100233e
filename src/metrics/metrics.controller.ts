import { Controller, Get, Res } from '@nestjs/common';
import type { Response } from 'express';
import { Public } from '../auth/route-access.decorators';
import { MetricsService } from './metrics.service';

/** GET /metrics in Prometheus' text format. */
@Public()
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  @Get()
  async scrape(@Res() res: Response): Promise<void> {
    res.setHeader('content-type', this.metrics.registry.contentType);
    res.end(await this.metrics.registry.metrics());
  }
}
