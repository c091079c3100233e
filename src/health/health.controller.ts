import { Controller, Get, HttpCode, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import type Redis from 'ioredis';
import { Public } from '../auth/route-access.decorators';
import { REDIS } from '../redis/redis.module';
import { InFlightTracker } from '../lifecycle/in-flight.tracker';
import { BackendHealth } from '../routing/backend-health';
import { ModelRouter } from '../routing/model-router.service';

const REDIS_PING_TIMEOUT_MS = 1000;

/**
 * Liveness (the process answers) and readiness (config loaded, Redis answers, not draining). Readiness also says
 * which backends are unusable and why, without failing for them: every replica sees the same backends, so taking
 * replicas out of the load balancer for a vendor's outage would turn one model's outage into the whole gateway's.
 * The status is `degraded` (still 200) while any backend is unusable.
 */
@Public()
@Controller('health')
export class HealthController {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly inFlight: InFlightTracker,
    private readonly health: BackendHealth,
    private readonly router: ModelRouter,
  ) {}

  @Get('live')
  @HttpCode(200)
  live() {
    return { status: 'ok' };
  }

  @Get('ready')
  async ready(@Res({ passthrough: true }) res: Response) {
    // The config was validated before the app could start, so it is loaded if we answer at all.
    const redis = await this.pingRedis();
    const ok = redis && !this.inFlight.draining;
    const backends = this.health.report(this.router.allDeployments().map(({ deployment }) => deployment));
    const unusable = Object.keys(backends).filter((id) => !backends[id].usable);
    res.status(ok ? 200 : 503);
    return {
      status: !ok ? 'unavailable' : unusable.length ? 'degraded' : 'ok',
      checks: { config: 'ok', redis: redis ? 'ok' : 'unreachable', accepting: !this.inFlight.draining },
      backends,
      unusable_backends: unusable,
    };
  }

  private async pingRedis(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), REDIS_PING_TIMEOUT_MS);
    });
    const ping = this.redis.ping().then(
      (answer) => answer === 'PONG',
      () => false,
    );
    try {
      return await Promise.race([ping, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
