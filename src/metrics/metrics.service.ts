import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The one owner of Prometheus metrics: every metric is declared here, once, on this
 * registry (never prom-client's global one, so two gateways in one process, as in
 * the tests, do not collide).
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  readonly usageBufferedRecords = new Gauge({
    name: 'switchyard_usage_buffered_records',
    help: 'Usage records held in memory because Redis could not take them yet',
    registers: [this.registry],
  });

  readonly usageDroppedRecords = new Counter({
    name: 'switchyard_usage_dropped_records_total',
    help: 'Usage records dropped because the in-memory buffer was full (must stay 0)',
    registers: [this.registry],
  });

  readonly limitRejections = new Counter({
    name: 'switchyard_limit_rejections_total',
    help: 'Requests refused by a team or token limit',
    labelNames: ['team', 'limit'] as const,
    registers: [this.registry],
  });

  readonly redisOutageAdmissions = new Counter({
    name: 'switchyard_limits_unchecked_total',
    help: 'Requests admitted without a limit check because Redis was unreachable (fail-open)',
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }
}
