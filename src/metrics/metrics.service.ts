import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { GatewayConfig } from '../config/config.schema';
import { InFlightTracker } from '../lifecycle/in-flight.tracker';
import type { UsageRecord } from '../usage/usage-record';

/** Request latencies reach minutes: reasoning models can think for a long time before answering. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600];
/** The gateway's own time is sub-millisecond when healthy. */
const OVERHEAD_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
];

/** Timings of one request, in seconds. */
export interface RequestTimings {
  total: number;
  /** From sending the upstream request to having its whole answer (absent if it was never called). */
  upstream?: number;
  /** From the request's arrival to the first generated token sent (streams only). */
  firstToken?: number;
}

export interface QuotaReading {
  team: string;
  limit: string;
  /** In the limit's own unit: requests, tokens, or the billing currency for budgets. */
  remaining: number;
  /** Budgets: the fraction of the budget spent (alert at 0.8). */
  usedRatio?: number;
}

/**
 * The one owner of Prometheus metrics: every metric is declared here, once, on this
 * gateway's own registry (never prom-client's global one, so two gateways in one
 * process, as in the tests, do not collide). Labels are bounded: team, model and
 * backend come from config and the team store, never from free text; token ids only
 * when `metrics.tokenLabel` is on.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();
  private quotaSource?: () => Promise<QuotaReading[]>;
  private readonly tokenLabel: boolean;
  private readonly children = new Map<object, Map<string, unknown>>();

  readonly requests: Counter<string>;
  readonly tokens: Counter<string>;
  readonly cost: Counter<string>;
  readonly costUnknown: Counter<string>;
  readonly costWithoutCache: Counter<string>;

  readonly upstreamErrors = new Counter({
    name: 'switchyard_upstream_errors_total',
    help: 'Backend failures, by the gateway error code they became (upstream_timeout, upstream_unreachable, ...)',
    labelNames: ['backend', 'reason'] as const,
    registers: [this.registry],
  });

  readonly limitRejections = new Counter({
    name: 'switchyard_limit_rejections_total',
    help: 'Requests refused by a team or token limit',
    labelNames: ['team', 'limit'] as const,
    registers: [this.registry],
  });

  readonly adminAuthFailures = new Counter({
    name: 'switchyard_admin_auth_failures_total',
    help: 'Wrong admin keys, personal admin tokens and ID tokens at the CLI sign-in, by where they were presented (surface: admin_api, console_sign_in, personal_token, cli_sign_in) and how they were answered (outcome: rejected 401, throttled 429 because their address was blocked)',
    labelNames: ['surface', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly mcpCalls = new Counter({
    name: 'switchyard_mcp_calls_total',
    help: 'MCP tool calls, prompt gets and resource reads through /mcp (docs/mcp.md), by team, server ("(none)" when the name named no server), tool (a tool name the server listed, else "(unlisted)"; "(prompt)" for a prompts/get, "(resource)" for a resources/read) and outcome (ok, tool_error, refused, limited, unavailable, timeout, error, aborted: the client left)',
    labelNames: ['team', 'server', 'tool', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly mcpCallSeconds = new Histogram({
    name: 'switchyard_mcp_call_duration_seconds',
    help: 'How long MCP tool calls, prompt gets and resource reads through /mcp took, admission and the upstream server included, by server and outcome',
    labelNames: ['server', 'outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly mcpServerErrors = new Counter({
    name: 'switchyard_mcp_server_errors_total',
    help: 'Requests to an MCP server that failed to reach it (reason: unavailable, timeout); a list leaves its tools out',
    labelNames: ['server', 'reason'] as const,
    registers: [this.registry],
  });

  readonly mcpServerUp = new Gauge({
    name: 'switchyard_mcp_server_up',
    help: 'Whether an MCP server answered its last request from this replica (1) or failed it (0); a failed one is skipped for a back-off (docs/mcp.md)',
    labelNames: ['server'] as const,
    registers: [this.registry],
  });

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

  readonly requestLogQueued = new Gauge({
    name: 'switchyard_request_log_queued_entries',
    help: 'Request log entries waiting in memory for the store',
    registers: [this.registry],
  });

  readonly requestLogWritten = new Counter({
    name: 'switchyard_request_log_written_total',
    help: 'Request log entries the store took',
    registers: [this.registry],
  });

  readonly requestLogDropped = new Counter({
    name: 'switchyard_request_log_dropped_total',
    help: 'Request log entries not kept: queue_full (the store was slow or down and the queue full), store_failed (the store refused them after retries), shutdown (still queued when the gateway stopped), evicted (a team passed its entries per day in Redis)',
    labelNames: ['reason'],
    registers: [this.registry],
  });

  readonly usageUnreplicatedBatches = new Counter({
    name: 'switchyard_usage_unreplicated_batches_total',
    help: 'Usage batches written to a Redis master that no replica confirmed in time (lost if that master dies now)',
    registers: [this.registry],
  });

  readonly estimatesReplaced = new Counter({
    name: 'switchyard_usage_estimates_replaced_total',
    help: 'Requests recorded as lost (replica_lost) by another replica that ended after all, their own record replacing the estimate; metrics: which of the two the request and token counters count (real, or estimate when it was counted before the real record came)',
    labelNames: ['metrics'] as const,
    registers: [this.registry],
  });

  readonly responseCache = new Counter({
    name: 'switchyard_response_cache_total',
    help: 'The response cache, by model (configured names) and result: hit, miss, bypass (the client sent Cache-Control no-cache or no-store), stored, too_large (an answer over maxEntryBytes, not stored), error (Redis failed a lookup or store; the request went on without the cache)',
    labelNames: ['model', 'result'] as const,
    registers: [this.registry],
  });

  readonly limitsUnchecked = new Counter({
    name: 'switchyard_limits_unchecked_total',
    help: 'Requests admitted without a limit check because Redis was unreachable (fail-open)',
    registers: [this.registry],
  });

  readonly requestDuration = new Histogram({
    name: 'switchyard_request_duration_seconds',
    help: 'Model request duration, from arrival to the last byte sent',
    labelNames: ['model', 'backend', 'endpoint', 'stream'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly upstreamDuration = new Histogram({
    name: 'switchyard_upstream_duration_seconds',
    help: 'Time waiting on the backend, from sending the request to its whole answer',
    labelNames: ['model', 'backend', 'stream'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly gatewayOverhead = new Histogram({
    name: 'switchyard_gateway_overhead_seconds',
    help: "The gateway's own time: request duration minus the upstream wait",
    labelNames: ['stream'] as const,
    buckets: OVERHEAD_BUCKETS,
    registers: [this.registry],
  });

  readonly timeToFirstToken = new Histogram({
    name: 'switchyard_time_to_first_token_seconds',
    help: 'Streams: from the request arriving to the first generated token sent to the client',
    labelNames: ['model', 'backend'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly upstreamAttempts = new Counter({
    name: 'switchyard_upstream_attempts_total',
    help: 'Calls to each deployment (backend/upstreamModel), by outcome: ok, or the gateway error code the call ended in',
    labelNames: ['deployment', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly retries = new Counter({
    name: 'switchyard_retries_total',
    help: 'Requests that needed more than one call (a retry, another deployment or a fallback), by the model asked for, however they ended',
    labelNames: ['model'] as const,
    registers: [this.registry],
  });

  /** Set by the routing module: each deployment's circuit, read at scrape time. */
  private circuitSource?: () => Array<{ deployment: string; state: number }>;

  readonly openStreams = new Gauge({
    name: 'switchyard_open_streams',
    help: 'SSE streams being relayed right now',
    registers: [this.registry],
  });

  constructor(config: GatewayConfig, inFlight: InFlightTracker) {
    this.tokenLabel = config.metrics.tokenLabel;
    const token = this.tokenLabel ? ['token_id'] : [];
    this.requests = new Counter({
      name: 'switchyard_requests_total',
      help: 'Authenticated model requests (endpoint: chat.completions, messages, embeddings), by how they ended (outcome: ok, error, aborted, rejected)',
      labelNames: ['team', 'model', 'backend', 'endpoint', 'status_code', 'stream', 'outcome', ...token],
      registers: [this.registry],
    });
    this.tokens = new Counter({
      name: 'switchyard_tokens_total',
      help: "Tokens accounted (the same numbers as the usage API); reasoning tokens are part of completion, cache_read and cache_write (reads from and writes to the vendor's prompt cache) part of prompt",
      labelNames: ['team', 'model', 'backend', 'endpoint', 'type', ...token],
      registers: [this.registry],
    });
    this.cost = new Counter({
      name: 'switchyard_cost_total',
      help: "Spend in the billing currency's unit (billing.currency), from the usage record: the usage API's cost",
      labelNames: ['team', 'model', 'backend'],
      registers: [this.registry],
    });
    this.costWithoutCache = new Counter({
      name: 'switchyard_cost_without_cache_total',
      help: "What the requests counted in switchyard_cost_total would have cost with every prompt token at the input price (no prompt cache): minus switchyard_cost_total, what the vendors' prompt caches saved",
      labelNames: ['team', 'model', 'backend'],
      registers: [this.registry],
    });
    this.costUnknown = new Counter({
      name: 'switchyard_cost_unknown_total',
      help: 'Requests whose model has no known price: their spend is missing from switchyard_cost_total',
      labelNames: ['team', 'model'],
      registers: [this.registry],
    });
    new Gauge({
      name: 'switchyard_in_flight_requests',
      help: 'Requests being answered right now (streams included)',
      registers: [this.registry],
      collect() {
        this.set(inFlight.size);
      },
    });
    const readQuotas = () => this.quotaSource?.().catch(() => undefined);
    new Gauge({
      name: 'switchyard_quota_remaining',
      help: 'What is left of each team limit in its current window, read from Redis (every replica reports the same)',
      labelNames: ['team', 'limit'] as const,
      registers: [this.registry],
      async collect() {
        const readings = await readQuotas();
        if (!readings) return; // Redis unreachable: keep the last values rather than report none
        this.reset();
        for (const reading of readings)
          this.set({ team: reading.team, limit: reading.limit }, reading.remaining);
      },
    });
    new Gauge({
      name: 'switchyard_budget_used_ratio',
      help: 'The fraction of each team budget spent in its current window (budgetPerDay, budgetPerMonth), read from Redis at scrape time: alert at 0.8',
      labelNames: ['team', 'budget'] as const,
      registers: [this.registry],
      async collect() {
        const readings = await readQuotas();
        if (!readings) return;
        this.reset();
        for (const reading of readings)
          if (reading.usedRatio !== undefined)
            this.set({ team: reading.team, budget: reading.limit }, reading.usedRatio);
      },
    });
    const readCircuits = () => this.circuitSource?.() ?? [];
    new Gauge({
      name: 'switchyard_circuit_state',
      help: "Each deployment's circuit on this replica: 0 closed, 1 half-open (a probe may pass), 2 open (skipped)",
      labelNames: ['deployment'] as const,
      registers: [this.registry],
      collect() {
        for (const { deployment, state } of readCircuits()) this.set({ deployment }, state);
      },
    });
    collectDefaultMetrics({ register: this.registry });
  }

  /** One call to a deployment and how it ended (the label set's child is cached, as for requests). */
  observeAttempt(deployment: string, outcome: string): void {
    this.child(this.upstreamAttempts, [deployment, outcome]).inc();
  }

  /** Where the circuit gauge reads from (routing plugs in). */
  setCircuitSource(source: () => Array<{ deployment: string; state: number }>): void {
    this.circuitSource = source;
  }

  /** Where the quota gauge reads from (the limits module plugs in; metrics stays free of Redis). */
  setQuotaSource(source: () => Promise<QuotaReading[]>): void {
    this.quotaSource = source;
  }

  /** One finished model request (any endpoint): the same record usage accounting writes, plus its timings. */
  observeRequest(record: UsageRecord, timings: RequestTimings): void {
    const stream = String(record.stream);
    const token = this.tokenLabel ? [record.tokenId] : [];
    const where = [record.team, record.modelLabel, record.backend || '-', record.endpoint];
    this.child(this.requests, [...where, String(record.status), stream, record.outcome, ...token]).inc();
    if (record.promptTokens) this.child(this.tokens, [...where, 'prompt', ...token]).inc(record.promptTokens);
    if (record.completionTokens)
      this.child(this.tokens, [...where, 'completion', ...token]).inc(record.completionTokens);
    if (record.reasoningTokens)
      this.child(this.tokens, [...where, 'reasoning', ...token]).inc(record.reasoningTokens);
    // Cache reads and writes are part of prompt, as reasoning is of completion.
    if (record.cachedTokens)
      this.child(this.tokens, [...where, 'cache_read', ...token]).inc(record.cachedTokens);
    if (record.cacheWriteTokens)
      this.child(this.tokens, [...where, 'cache_write', ...token]).inc(record.cacheWriteTokens);
    if (record.costNanos)
      this.child(this.cost, [record.team, record.modelLabel, record.backend || '-']).inc(
        record.costNanos / 1e9,
      );
    else if (record.costNanos === null) this.child(this.costUnknown, [record.team, record.modelLabel]).inc();
    if (record.costWithoutCacheNanos)
      this.child(this.costWithoutCache, [record.team, record.modelLabel, record.backend || '-']).inc(
        record.costWithoutCacheNanos / 1e9,
      );

    // Latency histograms describe requests that reached a backend; refusals would only blur them.
    if (!record.backend) return;
    this.child(this.requestDuration, [record.modelLabel, record.backend, record.endpoint, stream]).observe(
      timings.total,
    );
    if (timings.upstream !== undefined) {
      this.child(this.upstreamDuration, [record.modelLabel, record.backend, stream]).observe(
        timings.upstream,
      );
      this.child(this.gatewayOverhead, [stream]).observe(Math.max(0, timings.total - timings.upstream));
    }
    if (timings.firstToken !== undefined)
      this.child(this.timeToFirstToken, [record.modelLabel, record.backend]).observe(timings.firstToken);
  }

  /**
   * The metric's child for these label values (in labelNames order), made once. prom-client otherwise
   * validates and hashes a label object on every call (~2% of a request's CPU). The cache holds one entry
   * per series the metric already has, so it is bounded as the labels are. (These metrics are never reset:
   * a reset would detach the cached children.)
   */
  private child<M extends Counter<string> | Histogram<string>>(
    metric: M,
    values: string[],
  ): ReturnType<M['labels']> {
    let children = this.children.get(metric);
    if (!children) this.children.set(metric, (children = new Map()));
    const key = values.join('\u0001');
    let child = children.get(key);
    if (!child) children.set(key, (child = metric.labels(...values)));
    return child as ReturnType<M['labels']>;
  }
}
