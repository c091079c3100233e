import 'reflect-metadata';
import { Type } from 'class-transformer';
import {
  ArrayMinSize,
  IsArray,
  IsBoolean,
  Allow,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { CeilingSettings, LimitSettings } from '../core/limit-settings';

/**
 * The shape of config/switchyard.yaml. Every class here is validated at boot;
 * maps (backends, models, teams) are validated entry by entry in config.loader.ts
 * so an error can name the exact key (e.g. `models.gpt-4o.backend`).
 */
/**
 * A backend family's `type` name. The loader checks it against the families it is given (providers/families.ts
 * lists them; config/ never imports it, see backend-families.ts).
 */
export type BackendType = string;

/**
 * How a model reasons: `native` (anthropic, gemini: the vendor's own thinking config),
 * `reasoning_effort` (OpenAI o-series/gpt-5: budget -> effort), `chat_template_kwargs`
 * (vLLM/SGLang/llama.cpp serving Qwen3-style models), or `none`.
 */
export const THINKING_MODES = ['none', 'native', 'reasoning_effort', 'chat_template_kwargs'] as const;
export type ThinkingMode = (typeof THINKING_MODES)[number];

export class ServerConfig {
  @IsInt() @Min(0) @Max(65535) port = 8080;
  @IsString() host = '0.0.0.0';
  /** CIDRs or addresses whose X-Forwarded-* headers are believed (Express `trust proxy`). */
  @IsArray() @IsString({ each: true }) trustedProxies: string[] = ['127.0.0.1/32', '::1/128'];
  /**
   * The gateway's origin as its clients reach it (`https://gateway.example.com`): where the MCP endpoint's RFC 9728
   * metadata says it is, whatever Host a request names. Absent: taken from the request (docs/mcp.md).
   */
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  publicUrl?: string;
  @IsInt() @Min(1024) maxBodyBytes = 20 * 1024 * 1024;
  /** How long SIGTERM waits for in-flight requests and streams before closing them. */
  @IsInt() @Min(0) shutdownGraceMs = 30_000;
  /** An SSE comment is sent on a stream that has been silent this long (0 turns it off). */
  @IsInt() @Min(0) sseKeepAliveMs = 15_000;
  /**
   * How long an idle client connection is kept open for its next request. Longer than the idle timeouts of the load
   * balancers and proxies in front (AWS ALB and nginx: 60 s), so the gateway never closes a connection at the moment
   * one of them reuses it, which its client would see as a reset or a 502 (Node's default is 5 s).
   */
  @IsInt() @Min(1000) keepAliveTimeoutMs = 65_000;
  /** When set, GET /metrics needs `Authorization: Bearer <metricsToken>`. */
  @IsOptional() @IsString() metricsToken?: string;
}

export class MetricsConfig {
  /** Adds a `token_id` label to the request and token counters (one series per token: off by default). */
  @IsBoolean() tokenLabel = false;
  /** How long the per-team quota-remaining gauge reuses what it read from Redis. */
  @IsInt() @Min(0) quotaCacheMs = 5_000;
}

export const OUTAGE_MODES = ['fail-open', 'fail-closed'] as const;
export type OutageMode = (typeof OUTAGE_MODES)[number];

/** `host:port` of a Redis node. */
const HOST_PORT = /^[^\s:]+:\d{1,5}$/;

export class RedisClusterConfig {
  /** Some of the cluster's nodes (`host:port`); ioredis discovers the rest and follows slot moves and failovers. */
  @IsArray()
  @ArrayMinSize(1)
  @Matches(HOST_PORT, { each: true, message: 'each node must be host:port' })
  nodes!: string[];
}

export class RedisSentinelConfig {
  /** The Sentinels (`host:port`); they name the current master of `name`, and a failover is followed. */
  @IsArray()
  @ArrayMinSize(1)
  @Matches(HOST_PORT, { each: true, message: 'each sentinel must be host:port' })
  sentinels!: string[];
  @IsString() @IsNotEmpty() name!: string;
  @IsOptional() @IsString() sentinelPassword?: string;
}

export class RedisConfig {
  /** One Redis server (when neither `cluster` nor `sentinel` is set). */
  @Matches(/^rediss?:\/\//, { message: 'must be a redis:// or rediss:// URL' }) url =
    'redis://127.0.0.1:6379';
  /** A Redis Cluster instead of one server. */
  @IsOptional() @ValidateNested() @Type(() => RedisClusterConfig) cluster?: RedisClusterConfig;
  /** A Sentinel-managed master instead of one server. */
  @IsOptional() @ValidateNested() @Type(() => RedisSentinelConfig) sentinel?: RedisSentinelConfig;
  /** For `cluster` and `sentinel` (a `url` carries its own): AUTH username and password, and TLS. */
  @IsOptional() @IsString() username?: string;
  @IsOptional() @IsString() password?: string;
  @IsBoolean() tls = false;
  @IsString() keyPrefix = 'sy:';
  /**
   * While Redis is unreachable: `fail-open` serves requests without enforcing limits
   * (usage is buffered and written later); `fail-closed` answers 503 instead.
   */
  @IsIn(OUTAGE_MODES as unknown as string[]) onOutage: OutageMode = 'fail-open';
  /** A Redis command slower than this fails (and counts as an outage for that request). */
  @IsInt() @Min(50) commandTimeoutMs = 1000;
  /**
   * Replicas that must hold a usage batch before the writer counts it written (Redis' WAIT), so a master that dies
   * right after acknowledging it cannot lose it. Default: 1 on a Cluster or Sentinel, 0 on one server.
   */
  @IsOptional() @IsInt() @Min(0) usageReplicaAcks?: number;
  /** How long the usage writer's WAIT blocks; past it the batch stays written and is counted as unreplicated. */
  @IsInt() @Min(10) usageReplicaAckTimeoutMs = 250;
}

export const AUTH_OUTAGE_MODES = ['reject', 'last-known'] as const;
export type AuthOutageMode = (typeof AUTH_OUTAGE_MODES)[number];

/**
 * The CLI's sign-in (`switchyard login`, docs/sso.md#the-cli-switchyard-login): a public client registered at the same provider,
 * with no secret (it runs on laptops), for the device authorization grant and/or a loopback redirect.
 */
export class OidcCliConfig {
  @IsString()
  @IsNotEmpty({ message: 'must be set (the public client id registered at the provider for the CLI)' })
  clientId!: string;
}

/**
 * Console sign-in through the organisation's OpenID Connect provider (docs/sso.md). Discovery from `issuer`; roles
 * from the ID token's `groupsClaim` through `groupRoles` (each value a role as access/roles.ts spells it, checked
 * by the loader so the error names the group).
 */
export class OidcConfig {
  /** The provider's issuer URL (its `/.well-known/openid-configuration` is read from there). */
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true }) issuer!: string;
  @IsString()
  @IsNotEmpty({ message: 'must be set (the client id registered at the provider)' })
  clientId!: string;
  @IsString()
  @IsNotEmpty({ message: 'must be set (the client secret registered at the provider)' })
  clientSecret!: string;
  /** Asked of the provider; `openid` must be among them (the loader checks). */
  @IsArray() @IsString({ each: true }) scopes: string[] = ['openid', 'email', 'profile'];
  /** Registered at the provider; default: `<the console's origin>/console/api/sso/callback`. */
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  redirectUrl?: string;
  /** The ID token claim that lists the person's groups (a list of strings, or one string). */
  @IsString() @IsNotEmpty() groupsClaim = 'groups';
  /** Group -> role (`org-admin`, `org-viewer`, `team-admin:<team>`, `team-member:<team>`). */
  @IsObject() groupRoles: Record<string, string> = {};
  /** The CLI's public client; absent: `switchyard login` is refused (404 from the gateway). */
  @IsOptional() @ValidateNested() @Type(() => OidcCliConfig) cli?: OidcCliConfig;
}

export class AuthConfig {
  /**
   * When the token store is unreachable: `reject` answers 503; `last-known` accepts the
   * tokens this replica last saw as valid (revocations during the outage are missed).
   */
  @IsIn(AUTH_OUTAGE_MODES as unknown as string[]) onOutage: AuthOutageMode = 'reject';
  /** Console sign-in through the organisation's identity provider; absent: admin-key sign-in only. */
  @IsOptional() @ValidateNested() @Type(() => OidcConfig) oidc?: OidcConfig;
}

export class UsageConfig {
  /** Usage records older than this are trimmed from each team's Redis Stream. */
  @IsInt() @Min(1) recordRetentionDays = 90;
  /** Per-day counters (what GET /admin/v1/usage reads) expire after this. */
  @IsInt() @Min(1) counterRetentionDays = 400;
  /** Usage records held in memory while Redis is unreachable; beyond this the oldest are dropped. */
  @IsInt() @Min(100) bufferMaxRecords = 100_000;
  /**
   * Every admitted request holds a lease in Redis, renewed by its replica every third of this. When a replica
   * dies, a survivor records its requests (what they reserved, estimated) once their leases run out: within
   * about 1.7x this. Concurrency limits release a dead replica's requests on the same clock. The survivor counts
   * those estimates in its metrics 10x this later, unless the requests' own records (a replica only paused)
   * replaced them meanwhile.
   */
  @IsInt() @Min(1) leaseSeconds = 30;
}

export class ResponsesConfig {
  /** How long a stored response (`store`, default true) can be read and continued: OpenAI keeps them 30 days. */
  @IsInt() @Min(60) storeTtlSeconds = 30 * 86_400;
}

export class LimitsConfig {
  /** Completion tokens reserved at admission when a request sets no max_tokens. */
  @IsInt() @Min(1) defaultCompletionReservation = 1024;
}

export class AdminConfig {
  @IsString() @IsNotEmpty({ message: 'must be set (it guards /admin/v1/*)' }) apiKey!: string;
}

export class ConsoleConfig {
  /** The admin web console at /console (its static files come with `npm run build`). */
  @IsBoolean() enabled = true;
  /** A console sign-in lasts this long (its session cookie's Max-Age and its Redis TTL). */
  @IsInt() @Min(60) @Max(7 * 86_400) sessionTtlSeconds = 8 * 3600;
  /** The admin-key sign-in (break-glass); `false` leaves only the sign-in through auth.oidc. */
  @IsBoolean() adminKeySignIn = true;
}

export class LogConfig {
  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) level = 'info';
}

/** A pattern of the operator's own for the request log's redaction; its matches become `[<name>]`. */
export class RedactionPatternConfig {
  @IsString()
  @Matches(/^[A-Za-z][A-Za-z0-9_-]{0,39}$/, {
    message: 'must be a letter then up to 39 letters, digits, _ or - (it names the marker [<name>])',
  })
  name!: string;
  /** RE2 syntax; the loader checks that RE2 compiles it (request-log/redaction/configured-patterns.ts). */
  @IsString() @IsNotEmpty({ message: 'must be set' }) pattern!: string;
}

/** The one redaction policy of the request log's store, its traces and its exporters (docs/request-log.md). */
export class RedactionConfig {
  /** Run before the built-in detectors (keys, tokens, emails, cards, IBANs, phone numbers), which always run. */
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => RedactionPatternConfig)
  patterns: RedactionPatternConfig[] = [];
}

/** How long the request log keeps each part, in days: expired by dropping whole keys or partitions. */
export class RequestLogRetentionConfig {
  @IsInt() @Min(1) @Max(3660) metadata = 30;
  /** What was sent and answered (teams with `logging.content: full`): usually kept for less time. */
  @IsInt() @Min(1) @Max(3660) content = 7;
}

/** The PostgreSQL store (`logging.requests.store: postgres`): tables partitioned by day, migrated by the gateway. */
export class RequestLogPostgresConfig {
  /** A libpq connection URL, e.g. postgres://switchyard:${PG_PASSWORD}@db:5432/switchyard. */
  @IsString() url = '';
  /** The schema the tables live in (created when missing). */
  @Matches(/^[a-z_][a-z0-9_]{0,62}$/, { message: 'must be a lower-case SQL identifier' }) schema =
    'switchyard';
  /** Connections the writer and the readers share. */
  @IsInt() @Min(1) @Max(64) poolSize = 4;
}

/** The Redis store (the default): per team and day, capped and expiring. */
export class RequestLogRedisConfig {
  /** Entries kept per team per day at most (the oldest of the day go first past it). */
  @IsInt() @Min(100) @Max(10_000_000) maxEntriesPerTeamPerDay = 10_000;
}

/** The request log (docs/request-log.md): one entry per model request, written off the request's path. */
export class RequestLogConfig {
  @IsBoolean() enabled = true;
  @IsIn(['redis', 'postgres']) store: 'redis' | 'postgres' = 'redis';
  /** Whether content (the request's messages, the answer) is kept, for teams that do not say (teams.<id>.logging). */
  @IsIn(['none', 'full']) content: 'none' | 'full' = 'none';
  @ValidateNested() @Type(() => RequestLogRetentionConfig) retentionDays: RequestLogRetentionConfig =
    new RequestLogRetentionConfig();
  @ValidateNested() @Type(() => RequestLogPostgresConfig) postgres: RequestLogPostgresConfig =
    new RequestLogPostgresConfig();
  @ValidateNested() @Type(() => RequestLogRedisConfig) redis: RequestLogRedisConfig =
    new RequestLogRedisConfig();
  /** Entries waiting for the store at most; past it new entries are dropped and counted. */
  @IsInt() @Min(100) @Max(1_000_000) queueSize = 10_000;
  @ValidateNested() @Type(() => RedactionConfig) redaction: RedactionConfig = new RedactionConfig();
}

export class LoggingConfig {
  @ValidateNested() @Type(() => RequestLogConfig) requests: RequestLogConfig = new RequestLogConfig();
}

export class TimeoutsConfig {
  @IsInt() @Min(1) connectMs = 10_000;
  /** Until the upstream's response headers arrive; reasoning models can think for minutes. */
  @IsInt() @Min(1) firstByteMs = 300_000;
  /** Longest silence allowed between two body chunks of an upstream response. */
  @IsInt() @Min(1) idleMs = 300_000;
  /** How long a request waits for one of the backend's `maxConnections` before a 503 upstream_busy with Retry-After. */
  @IsInt() @Min(0) connectionWaitMs = 2_000;
  /** The whole upstream call, streams included (0: no limit); exceeded -> 504 upstream_timeout, in-band once streaming. */
  @IsInt() @Min(0) totalMs = 600_000;
}

/** Per model, over its backends' timeouts (the connect timeout is the backend's connection pool's own). */
export class ModelTimeoutsConfig {
  @IsOptional() @IsInt() @Min(1) firstByteMs?: number;
  @IsOptional() @IsInt() @Min(1) idleMs?: number;
  @IsOptional() @IsInt() @Min(0) totalMs?: number;
}

/**
 * What every backend has, whatever its family. A family with keys of its own validates its backends with a subclass
 * in its folder (`providers/<family>/<family>.config.ts`), which the loader is given with the family list.
 */
export class BackendConfig {
  /** Checked against the known families by the loader (config.loader.ts, checkBackendTypes). */
  @Allow()
  type!: BackendType;
  /** Required for a family reached over HTTP (see `reachedOverHttp`). */
  @ValidateIf((backend: BackendConfig) => backend.reachedOverHttp())
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  baseUrl!: string;
  @IsOptional() @IsString() apiKey?: string;
  /**
   * Whether the backend cannot answer without `apiKey`. Default: yes for anthropic and gemini, and for openai
   * backends on https (vendors); no for openai backends on plain http (Ollama, vLLM on a private network) and local.
   * A backend that needs a key and has none is not listed in /v1/models, and its models answer 403 model_unavailable.
   */
  @IsOptional() @IsBoolean() apiKeyRequired?: boolean;
  /** Set by the loader, not in YAML: the environment variable `apiKey` is read from, for error messages. */
  declare apiKeyEnv?: string;
  /**
   * Requests in flight to this backend at once (one connection each: HTTP/1.1 has no multiplexing, and a stream
   * holds its connection for as long as it runs). Sized for streaming; see timeouts.connectionWaitMs.
   */
  @IsInt() @Min(1) maxConnections = 1024;
  @ValidateNested() @Type(() => TimeoutsConfig) timeouts: TimeoutsConfig = new TimeoutsConfig();
  /** Extra static headers sent upstream (e.g. OpenAI-Organization). */
  @IsOptional() @IsObject() headers?: Record<string, string>;

  /** Whether the backend is reached at `baseUrl` (a family that is not, the local one, says no). */
  reachedOverHttp(): boolean {
    return true;
  }
}

export class BudgetRangeConfig {
  @IsInt() @Min(0) min = 1;
  @IsInt() @Min(1) max = 24_576;
}

export class EffortThresholdsConfig {
  /** A budget at or below this is `low` effort ... */
  @IsInt() @Min(1) low = 2048;
  /** ... at or above this `high`; in between `medium`. */
  @IsInt() @Min(1) high = 8192;
}

/**
 * A configured price's long-context tier: the rates of a whole request whose input (uncached, cache reads and writes,
 * as the vendors count it) is more than `above` tokens (Anthropic's and Google's 200k tiers).
 */
export class LongContextPriceConfig {
  @IsInt() @Min(1) above!: number;
  @IsNumber() @Min(0) input!: number;
  @IsNumber() @Min(0) output!: number;
  @IsOptional() @IsNumber() @Min(0) cachedInput?: number;
  @IsOptional() @IsNumber() @Min(0) cacheWrite?: number;
  @IsOptional() @IsNumber() @Min(0) cacheWrite1h?: number;
}

/**
 * A model's or a deployment's price: its figures per million tokens in `billing.currency`, or which entry of the price
 * data (@pydantic/genai-prices) prices it, when its upstream model id is not the priced one (an Azure deployment's
 * name, a model bought through another provider): `provider` (default: the backend family's) and `model` (default:
 * the upstream model).
 */
export class PriceConfig {
  @ValidateIf((price: PriceConfig) => !price.isReference()) @IsNumber() @Min(0) input?: number;
  @ValidateIf((price: PriceConfig) => !price.isReference()) @IsNumber() @Min(0) output?: number;
  /** Prompt tokens read from the vendor's cache (default: `input`). */
  @IsOptional() @IsNumber() @Min(0) cachedInput?: number;
  /**
   * Prompt tokens written to the vendor's cache for its default lifetime (Anthropic's 5 minutes: 1.25x input). No
   * default: a request with cache writes and no price for them has an unknown cost (flagged, never 0). With a
   * reference to the price data (or alone), it fills in or replaces the entry's own (the data has no 1-hour price for
   * Claude on Bedrock or Vertex, for one).
   */
  @IsOptional() @IsNumber() @Min(0) cacheWrite?: number;
  /** Prompt tokens written to the vendor's cache for an hour (Anthropic's `ttl: "1h"`: 2x input). No default. */
  @IsOptional() @IsNumber() @Min(0) cacheWrite1h?: number;
  /** Reasoning tokens, when the vendor prices them apart from output (default: `output`). */
  @IsOptional() @IsNumber() @Min(0) reasoning?: number;
  /** A long-context tier: the rates of a whole request above `longContext.above` input tokens. */
  @IsOptional() @ValidateNested() @Type(() => LongContextPriceConfig) longContext?: LongContextPriceConfig;
  /** The price data's provider id to look the model up under (`openai`, `anthropic`, `google`, `azure`, `aws`...). */
  @IsOptional() @IsString() @IsNotEmpty() provider?: string;
  /** The model id to look up in the price data. */
  @IsOptional() @IsString() @IsNotEmpty() model?: string;

  /**
   * Whether this names an entry of the price data rather than giving figures: `provider` or `model`, or only cache
   * write prices (the deployment's own entry, with them added).
   */
  isReference(): boolean {
    return (
      this.provider !== undefined ||
      this.model !== undefined ||
      (this.input === undefined &&
        this.output === undefined &&
        (this.cacheWrite !== undefined || this.cacheWrite1h !== undefined))
    );
  }

  /** Figures and a reference together: which one applies must not be a guess (reported as `...price.figuresOrReference`). */
  @ValidateIf(
    (price: PriceConfig) =>
      price.isReference() &&
      [price.input, price.output, price.cachedInput, price.reasoning, price.longContext].some(
        (value) => value !== undefined,
      ),
  )
  @IsIn([], { message: 'give either figures (input, output, ...) or provider/model, not both' })
  protected get figuresOrReference(): string {
    return 'both';
  }

  /**
   * A tier states every cache class the base price states: the tier's rates replace the base ones, so a class it left
   * out would be billed at the base rate above the threshold (Anthropic doubles reads and writes there too).
   */
  @ValidateIf((price: PriceConfig) => price.tierMisses().length > 0)
  @IsIn([], {
    message: (args) =>
      `the long-context tier needs its own ${(args.object as PriceConfig).tierMisses().join(', ')} (the base price gives one)`,
  })
  protected get longContextClasses(): string {
    return 'incomplete';
  }

  /** The cache classes the base price gives and its long-context tier does not. */
  tierMisses(): string[] {
    const tier = this.longContext;
    if (!tier) return [];
    return (['cachedInput', 'cacheWrite', 'cacheWrite1h'] as const).filter(
      (name) => this[name] !== undefined && tier[name] === undefined,
    );
  }
}

export class BillingConfig {
  /** The currency every price, cost and budget is in (ISO 4217). */
  @Matches(/^[A-Z]{3}$/, { message: 'must be an ISO 4217 code such as USD' }) currency = 'USD';
  /** The shipped price table (a source and date per entry); config prices override it; '' for none. */
  @IsString() priceTable = 'config/prices.json';
  /**
   * A price data file in @pydantic/genai-prices' format (its data.json: a list of providers), newer than the one the
   * package bundles; '' (default) for the bundled data. The gateway never fetches prices itself.
   */
  @IsString() priceData = '';
}

/** One deployment of a model: a backend and the model name there. */
export class DeploymentConfig {
  @IsString() @IsNotEmpty() backend!: string;
  @IsString() @IsNotEmpty() upstreamModel!: string;
  /** `weighted` routing: this deployment's share (relative to the others of its priority). */
  @IsInt() @Min(0) weight = 1;
  /** Lower is tried first; deployments of one priority share its traffic (by weight, or least busy). */
  @IsInt() @Min(0) priority = 0;
  /** This deployment's price, when it differs from the model's (another region, a committed-use discount). */
  @IsOptional() @ValidateNested() @Type(() => PriceConfig) price?: PriceConfig;
}

export const MODEL_KINDS = ['chat', 'embedding'] as const;
export type ModelKind = (typeof MODEL_KINDS)[number];

export const ROUTING_STRATEGIES = ['weighted', 'least-busy', 'priority'] as const;
export type RoutingStrategy = (typeof ROUTING_STRATEGIES)[number];

/** Retrying a failed call (before its first byte reached the client). */
export class RetriesConfig {
  /** Further calls after the first, per model (the first ones go to other deployments when there are any). */
  @IsInt() @Min(0) @Max(10) attempts = 2;
  /** Backoff before calling a deployment again: this, doubled each time, with jitter. */
  @IsInt() @Min(0) backoffMs = 100;
  /** An upstream's Retry-After is honoured up to this; longer, the next deployment or the error. */
  @IsInt() @Min(0) maxRetryAfterMs = 2_000;
}

/** Per replica: a deployment that failed `failures` times in a row is skipped for `cooldownMs`, then probed once. */
export class CircuitConfig {
  @IsInt() @Min(1) failures = 5;
  @IsInt() @Min(100) cooldownMs = 30_000;
}

/**
 * Each network backend's base URL gets a bounded TCP connect at start-up (nothing is sent, no key); one that cannot
 * be reached is known to be down: its deployments are skipped and its models not listed until a re-probe, every
 * `circuit.cooldownMs`, or a call to it succeeds (routing/backend-health.ts).
 */
export class ProbeConfig {
  /** How long the connect may take (0: no probe, every backend counts as reachable). */
  @IsInt() @Min(0) @Max(60_000) timeoutMs = 2_000;
}

/** A model's response cache (docs/response-cache.md): whole answers kept in Redis per team and request. */
export class ResponseCacheConfig {
  /** How long an answer is kept (at most 30 days). */
  @IsInt() @Min(1) @Max(30 * 86_400) ttlSeconds!: number;
  /** Answers larger than this (the bytes the client got) are not stored. Default 1 MiB, at most 64 MiB. */
  @IsInt() @Min(1) @Max(64 * 1_048_576) maxEntryBytes = 1_048_576;
}

export class ModelConfig {
  /** The one-deployment shorthand: `backend` + `upstreamModel` (or use `deployments`). */
  @ValidateIf((model: ModelConfig) => model.deployments === undefined)
  @IsString()
  @IsNotEmpty()
  backend!: string;
  @ValidateIf((model: ModelConfig) => model.deployments === undefined)
  @IsString()
  @IsNotEmpty()
  upstreamModel!: string;
  /** Several deployments serving this model (two keys, regions, replicas); see `routing`. */
  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => DeploymentConfig)
  deployments?: DeploymentConfig[];
  /** Other configured models tried, in order, when every deployment of this one failed. */
  @IsOptional() @IsArray() @IsString({ each: true }) fallbacks?: string[];
  /** `weighted` (default): random by weight within the best priority; `least-busy`: fewest in flight; `priority`: in the order listed. */
  @IsIn(ROUTING_STRATEGIES as unknown as string[]) routing: RoutingStrategy = 'weighted';
  /** Overrides its backends' `firstByteMs`, `idleMs` and `totalMs` for this model (a slow reasoning model, say). */
  @IsOptional() @ValidateNested() @Type(() => ModelTimeoutsConfig) timeouts?: ModelTimeoutsConfig;
  /** `chat` (POST /v1/chat/completions) or `embedding` (POST /v1/embeddings); the other operation is a 400. */
  @IsIn(MODEL_KINDS as unknown as string[]) kind: ModelKind = 'chat';
  /** Its price (figures, or a price data entry), over the price data's entry for each deployment's upstream model. */
  @IsOptional() @ValidateNested() @Type(() => PriceConfig) price?: PriceConfig;
  @IsIn(THINKING_MODES as unknown as string[]) thinking: ThinkingMode = 'none';
  /** anthropic: `max_tokens` sent when the client sets none (Anthropic requires it). */
  @IsInt() @Min(1) maxTokens = 4096;
  /** gemini `native`: the thinking budgets the model accepts (a budget outside is a 400 before any call). */
  @ValidateNested() @Type(() => BudgetRangeConfig) thinkingBudget: BudgetRangeConfig =
    new BudgetRangeConfig();
  /** `reasoning_effort`: how a budget becomes an effort. */
  @ValidateNested() @Type(() => EffortThresholdsConfig) effortThresholds: EffortThresholdsConfig =
    new EffortThresholdsConfig();
  /** `chat_template_kwargs`: the top-level request field that carries the budget (e.g. vLLM's `thinking_token_budget`); none if unset. */
  @IsOptional() @IsString() budgetField?: string;
  /** Answers kept and replayed for identical requests of a team (opt-in; docs/response-cache.md). */
  @IsOptional() @ValidateNested() @Type(() => ResponseCacheConfig) responseCache?: ResponseCacheConfig;
}

export class TeamLoggingConfig {
  /** `full`: the request's messages and the answer are kept (redacted); `none`: metadata only. */
  @IsIn(['none', 'full']) content!: 'none' | 'full';
}

/** What a team may reach through /mcp: servers by id, and globs over the tools' gateway names `<server>__<tool>`. */
export class TeamMcpConfig {
  @IsArray() @IsString({ each: true }) servers: string[] = [];
  @IsArray() @IsString({ each: true }) tools: string[] = ['*'];
}

export class TeamSeedConfig {
  /** Default: the ceiling's models, else every model (`*`). */
  @IsOptional() @IsArray() @IsString({ each: true }) models?: string[];
  @IsOptional() @ValidateNested() @Type(() => LimitSettings) limits?: LimitSettings;
  /** The most a team-admin may give the team (teams/team-ceiling.ts); the seed's own values must be within it. */
  @IsOptional() @ValidateNested() @Type(() => CeilingSettings) ceiling?: CeilingSettings;
  @IsOptional() @IsObject() metadata?: Record<string, string>;
  /** Its team-members may keep team tokens of their own (docs/api.md, self-service tokens). Default: no. */
  @IsOptional() @IsBoolean() selfServiceTokens?: boolean;
  /** What the request log keeps of this team's requests (default: logging.requests.content). */
  @IsOptional() @ValidateNested() @Type(() => TeamLoggingConfig) logging?: TeamLoggingConfig;
  /** `false`: the team's requests never use the response cache of models that have one (default: they do). */
  @IsOptional() @IsBoolean() responseCache?: boolean;
  /** The MCP servers and tools it may reach through /mcp (docs/mcp.md); default: none. */
  @IsOptional() @ValidateNested() @Type(() => TeamMcpConfig) mcp?: TeamMcpConfig;
}

export class RoutingConfig {
  @ValidateNested() @Type(() => RetriesConfig) retries: RetriesConfig = new RetriesConfig();
  @ValidateNested() @Type(() => CircuitConfig) circuit: CircuitConfig = new CircuitConfig();
  @ValidateNested() @Type(() => ProbeConfig) probe: ProbeConfig = new ProbeConfig();
}

export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json', 'grpc'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/** Where the gateway's traces go (docs/tracing.md): an OpenTelemetry collector or any OTLP receiver. */
export class OtlpConfig {
  /**
   * The receiver's base URL, as OTEL_EXPORTER_OTLP_ENDPOINT has it (http://collector:4318; grpc: :4317). Over HTTP
   * the traces go to its `/v1/traces`, unless the URL already ends with it.
   */
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true }) endpoint!: string;
  @IsIn(OTLP_PROTOCOLS as unknown as string[]) protocol: OtlpProtocol = 'http/protobuf';
  /** Sent with every export (an API key of a hosted backend, say; `${ENV}` works as everywhere). */
  @IsObject() headers: Record<string, string> = {};
  /** The share of traces started here that are kept (a caller's sampled traceparent is always followed). */
  @IsNumber() @Min(0) @Max(1) sampleRatio = 1;
  /** Ended spans are sent in batches at least this often (the SDK's batch span processor's delay). */
  @IsInt() @Min(10) @Max(60_000) exportDelayMs = 5_000;
}

export class TelemetryConfig {
  /** Absent: no tracing at all (no tracer, no spans, nothing on the request path). */
  @IsOptional() @ValidateNested() @Type(() => OtlpConfig) otlp?: OtlpConfig;
}

/**
 * An MCP server the gateway fronts (docs/mcp.md): a remote one reached over Streamable HTTP (`url`, with `headers`
 * for its credentials, `${ENV}` expanded like every string here), or a local one the gateway starts and speaks to
 * over stdio (`command`, `args`, `env`). Exactly one of `url` and `command` (the loader checks).
 */
export class McpServerConfig {
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  url?: string;
  /** Sent with every request to a remote server (e.g. `Authorization: Bearer ${GITHUB_TOKEN}`); never to clients. */
  @IsOptional() @IsObject() headers?: Record<string, string>;
  @IsOptional() @IsString() @IsNotEmpty() command?: string;
  @IsArray() @IsString({ each: true }) args: string[] = [];
  /**
   * The local server's environment: these, over a few harmless variables of the gateway's (PATH, HOME, USER, SHELL,
   * TERM, LOGNAME; the SDK's default). No other variable of the gateway's reaches it, so its secrets stay here.
   */
  @IsOptional() @IsObject() env?: Record<string, string>;
  /**
   * Connecting, listing and each call: past it the request is an MCP error; a connect or a list past it is the
   * server's failure (its back-off), a call past it only that call's (docs/mcp.md).
   */
  @IsInt() @Min(100) @Max(600_000) timeoutMs = 10_000;
}

/**
 * How long a failing MCP server is skipped (docs/mcp.md, when a server is down): `initialMs` after a failure,
 * doubling with each failed probe up to `maxMs`.
 */
export class McpBackoffConfig {
  @IsInt() @Min(100) @Max(600_000) initialMs = 5000;
  @IsInt() @Min(100) @Max(3_600_000) maxMs = 60_000;
}

/** The MCP servers the gateway fronts, by id; the map is validated entry by entry by the loader. */
export class McpConfig {
  @IsObject() servers: Record<string, McpServerConfig> = {};
  @ValidateNested() @Type(() => McpBackoffConfig) backoff: McpBackoffConfig = new McpBackoffConfig();
  /**
   * How long (ms) a server's list (tools, prompts, resources, templates) is reused for every team before it is asked
   * again, so one team's lists cannot spend a shared credential's rate limit; 0 asks on every list.
   */
  @IsInt() @Min(0) @Max(300_000) listCacheMs = 5000;
}

export class GatewayConfig {
  @ValidateNested() @Type(() => ServerConfig) server: ServerConfig = new ServerConfig();
  @ValidateNested() @Type(() => RedisConfig) redis: RedisConfig = new RedisConfig();
  @ValidateNested() @Type(() => AdminConfig) admin!: AdminConfig;
  @ValidateNested() @Type(() => ConsoleConfig) console: ConsoleConfig = new ConsoleConfig();
  @ValidateNested() @Type(() => AuthConfig) auth: AuthConfig = new AuthConfig();
  @ValidateNested() @Type(() => UsageConfig) usage: UsageConfig = new UsageConfig();
  @ValidateNested() @Type(() => LimitsConfig) limits: LimitsConfig = new LimitsConfig();
  /** The currency of prices, costs and budgets, and the shipped price table. */
  @ValidateNested() @Type(() => BillingConfig) billing: BillingConfig = new BillingConfig();
  /** POST /v1/responses: what the gateway keeps of stored responses. */
  @ValidateNested() @Type(() => ResponsesConfig) responses: ResponsesConfig = new ResponsesConfig();
  /** Retries and circuit breaking for every model (see models.<name>.deployments and fallbacks). */
  @ValidateNested() @Type(() => RoutingConfig) routing: RoutingConfig = new RoutingConfig();
  @ValidateNested() @Type(() => MetricsConfig) metrics: MetricsConfig = new MetricsConfig();
  @ValidateNested() @Type(() => LogConfig) log: LogConfig = new LogConfig();
  /** What is kept of each request (`log` above is the gateway's own log lines). */
  @ValidateNested() @Type(() => LoggingConfig) logging: LoggingConfig = new LoggingConfig();
  /** Traces over OTLP (docs/tracing.md). */
  @ValidateNested() @Type(() => TelemetryConfig) telemetry: TelemetryConfig = new TelemetryConfig();
  @IsBoolean() accessLog = true;
  // Maps are validated entry by entry by the loader (so errors name `models.<name>.<key>`).
  @IsObject() backends: Record<string, BackendConfig> = {};
  @IsObject() models: Record<string, ModelConfig> = {};
  @IsObject() teams: Record<string, TeamSeedConfig> = {};
  /** MCP servers fronted at /mcp (docs/mcp.md); `servers` is validated entry by entry by the loader. */
  @ValidateNested() @Type(() => McpConfig) mcp: McpConfig = new McpConfig();
}
