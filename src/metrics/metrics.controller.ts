import { Controller, Get, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Public } from '../auth/route-access.decorators';
import { bearerToken, matchesDigest, secretDigest } from '../auth/token-format';
import { GatewayConfig } from '../config/config.schema';
import { GatewayException } from '../core/errors/gateway.exception';
import { MetricsService } from './metrics.service';

/** GET /metrics in Prometheus' text format; behind `server.metricsToken` when one is set. */
@Public()
@Controller('metrics')
export class MetricsController {
  private readonly tokenDigest?: Buffer;

  constructor(
    private readonly metrics: MetricsService,
    config: GatewayConfig,
  ) {
    if (config.server.metricsToken) this.tokenDigest = secretDigest(config.server.metricsToken);
  }

  @Get()
  async scrape(@Req() req: Request, @Res() res: Response): Promise<void> {
    if (this.tokenDigest) {
      const presented = bearerToken(req.headers.authorization);
      if (!presented || !matchesDigest(presented, this.tokenDigest)) {
        throw new GatewayException(
          'invalid_api_key',
          'GET /metrics needs "Authorization: Bearer <server.metricsToken>".',
        );
      }
    }
    res.setHeader('content-type', this.metrics.registry.contentType);
    res.end(await this.metrics.registry.metrics());
  }
}
