import { costInNanos, costWithoutCacheNanos } from '../billing/cost';
import type { Price } from '../billing/price-book';
import { USAGE_OUTCOMES, type UsageOutcome } from '../core/request-outcome';

export { USAGE_OUTCOMES, type UsageOutcome } from '../core/request-outcome';

/** One request's usage: appended to the team's Redis Stream and added to its day counters. */
export interface UsageRecord {
  /** Unique per record (not the request id, which a client can choose): the write is deduplicated on it. */
  id: string;
  at: string;
  requestId: string;
  team: string;
  tokenId: string;
  /** The model the client asked for (the body's `model`, cut to 256 characters), or `-` when it named none. */
  model: string;
  /**
   * The model's name in the day counters and metric labels, which must stay bounded: `model` when it is a
   * configured model, UNCONFIGURED_MODEL for any other name (a client cannot add a counter or series per string it
   * sends), `-` when the body named none.
   */
  modelLabel: string;
  backend: string;
  upstreamModel: string;
  /** The configured model that answered: a fallback's name when one did, else the model asked for. */
  servedModel: string;
  /** Calls made to backends for this request (retries and fallbacks included; 0 if none was called). */
  attempts: number;
  /** The API it came to: `chat.completions`, `messages` or `embeddings`. */
  endpoint: string;
  stream: boolean;
  promptTokens: number;
  completionTokens: number;
  reasoningTokens: number;
  /** The HTTP status the client got (200 for a stream, even one that failed midway). */
  status: number;
  outcome: UsageOutcome;
  errorCode: string;
  latencyMs: number;
  /** True when the counts were worked out by the gateway's tokenizer, not reported by the upstream. */
  estimated: boolean;
  /** Prompt tokens read from the backend's cache (part of promptTokens). */
  cachedTokens: number;
  /** Prompt tokens written to the backend's cache (part of promptTokens, apart from cachedTokens), 1-hour ones included. */
  cacheWriteTokens: number;
  /** The part of cacheWriteTokens written for an hour (priced apart: Anthropic bills it 2x input, 5 minutes 1.25x). */
  cacheWrite1hTokens: number;
  /** In nano-units of the billing currency; null when the model's price is unknown (flagged, never 0). */
  costNanos: number | null;
  /** The cost rests on estimated counts. */
  costEstimated: boolean;
  /** Answered from the response cache (docs/response-cache.md): no backend was called, its cost is 0. */
  cacheHit: boolean;
  /**
   * What it would have cost with every prompt token at the input price (no prompt cache), when its cost is known:
   * the metrics' baseline for what caching saved. Not stored (the record's counts and price give it again).
   */
  costWithoutCacheNanos?: number;
}

/** The counters' and metrics' name for every model name that is not in the config (a typo, a model not served). */
export const UNCONFIGURED_MODEL = '(unconfigured)';

/** How long a model name a record keeps may be (the counters and metrics never see it unless it is configured). */
const RECORDED_MODEL_CHARS = 256;

/**
 * The record's `model` and `modelLabel` for a request: `routed` is the configured model it was routed to, if it got
 * that far; otherwise the body's `model`, if it named one, is recorded as asked and counted under its own name only
 * when `configured` says it is a model of the config.
 */
export function modelNames(
  routed: string | undefined,
  body: unknown,
  configured: (name: string) => boolean,
): Pick<UsageRecord, 'model' | 'modelLabel'> {
  if (routed !== undefined) return { model: routed, modelLabel: routed };
  const asked = body !== null && typeof body === 'object' ? (body as { model?: unknown }).model : undefined;
  if (typeof asked !== 'string' || asked === '') return { model: '-', modelLabel: '-' };
  return {
    model: asked.slice(0, RECORDED_MODEL_CHARS),
    modelLabel: configured(asked) ? asked : UNCONFIGURED_MODEL,
  };
}

/** The cost fields of a record, from its counts and the price that applies (billing/price-book.ts). */
export function withCost(
  record: Omit<UsageRecord, 'costNanos' | 'costEstimated' | 'costWithoutCacheNanos'>,
  price: Price | undefined,
): UsageRecord {
  // A response cache hit called no backend: its tokens are counted, nothing was spent.
  if (record.cacheHit) return { ...record, costNanos: 0, costEstimated: false };
  const tokens = {
    prompt: record.promptTokens,
    cached: record.cachedTokens,
    cacheWrite: record.cacheWriteTokens,
    cacheWrite1h: record.cacheWrite1hTokens,
    completion: record.completionTokens,
    reasoning: record.reasoningTokens,
  };
  const cost = costInNanos(tokens, price);
  const usedCache = record.cachedTokens > 0 || record.cacheWriteTokens > 0;
  return {
    ...record,
    costNanos: cost ?? null,
    costEstimated: cost !== undefined && record.estimated,
    ...(cost === undefined
      ? {}
      : { costWithoutCacheNanos: usedCache ? costWithoutCacheNanos(tokens, price) : cost }),
  };
}

/**
 * Counter names in a day hash are `<metric>|<tokenId>|<model>` for chat completions (the format from before
 * there were other endpoints, kept so existing counters read the same) and `<metric>|<tokenId>|<model>␟<endpoint>`
 * for any other endpoint (␟ is U+001F, the unit separator, which no model name holds); the reader sums what a
 * query asks for.
 */
export const COUNTER_METRICS = [
  'requests',
  'prompt',
  'completion',
  'reasoning',
  'cache_read',
  'cache_write',
  'estimated',
  'cost',
  'cost_unknown',
  'cost_known',
  ...USAGE_OUTCOMES,
] as const;
export type CounterMetric = (typeof COUNTER_METRICS)[number];

const DEFAULT_ENDPOINT = 'chat.completions';
const ENDPOINT_SEPARATOR = '\u001f';

export function counterField(
  metric: CounterMetric,
  tokenId: string,
  model: string,
  endpoint = DEFAULT_ENDPOINT,
): string {
  return endpoint === DEFAULT_ENDPOINT
    ? `${metric}|${tokenId}|${model}`
    : `${metric}|${tokenId}|${model}${ENDPOINT_SEPARATOR}${endpoint}`;
}

export function parseCounterField(
  field: string,
): { metric: CounterMetric; tokenId: string; model: string; endpoint: string } | null {
  const first = field.indexOf('|');
  const second = field.indexOf('|', first + 1);
  if (first < 0 || second < 0) return null;
  const rest = field.slice(second + 1);
  const split = rest.lastIndexOf(ENDPOINT_SEPARATOR);
  const [model, endpoint] =
    split < 0 ? [rest, DEFAULT_ENDPOINT] : [rest.slice(0, split), rest.slice(split + 1)];
  return {
    metric: field.slice(0, first) as CounterMetric,
    tokenId: field.slice(first + 1, second),
    model,
    endpoint,
  };
}

/** The HINCRBY pairs one record adds to its day hash. */
export function counterIncrements(record: UsageRecord): Array<[string, number]> {
  const at = (metric: CounterMetric) =>
    counterField(metric, record.tokenId, record.modelLabel, record.endpoint);
  const out: Array<[string, number]> = [
    [at('requests'), 1],
    [at(record.outcome), 1],
  ];
  if (record.promptTokens) out.push([at('prompt'), record.promptTokens]);
  if (record.completionTokens) out.push([at('completion'), record.completionTokens]);
  if (record.reasoningTokens) out.push([at('reasoning'), record.reasoningTokens]);
  if (record.cachedTokens) out.push([at('cache_read'), record.cachedTokens]);
  if (record.cacheWriteTokens) out.push([at('cache_write'), record.cacheWriteTokens]);
  if (record.estimated) out.push([at('estimated'), 1]);
  if (record.costNanos) out.push([at('cost'), record.costNanos]);
  if (record.costNanos === null) out.push([at('cost_unknown'), 1]);
  // A request that spent tokens at a known price, even a zero price: without this count a sum of zero-priced and
  // unpriced requests (cost 0 adds no `cost` field) could not tell "known to be 0" from "unknown".
  else if (record.promptTokens || record.completionTokens) out.push([at('cost_known'), 1]);
  return out;
}

/** Stream entry fields, snake_case like the rest of the public API. */
export function recordFields(record: UsageRecord): string[] {
  return [
    'id',
    record.id,
    'at',
    record.at,
    'request_id',
    record.requestId,
    'team',
    record.team,
    'token_id',
    record.tokenId,
    'model',
    record.model,
    'backend',
    record.backend,
    'upstream_model',
    record.upstreamModel,
    'served_model',
    record.servedModel,
    'attempts',
    String(record.attempts),
    'endpoint',
    record.endpoint,
    'stream',
    record.stream ? '1' : '0',
    'prompt_tokens',
    String(record.promptTokens),
    'completion_tokens',
    String(record.completionTokens),
    'reasoning_tokens',
    String(record.reasoningTokens),
    'total_tokens',
    String(record.promptTokens + record.completionTokens),
    'status',
    String(record.status),
    'outcome',
    record.outcome,
    'error_code',
    record.errorCode,
    'latency_ms',
    String(record.latencyMs),
    'estimated',
    record.estimated ? '1' : '0',
    'cached_tokens',
    String(record.cachedTokens),
    'cache_write_tokens',
    String(record.cacheWriteTokens),
    'cache_write_1h_tokens',
    String(record.cacheWrite1hTokens),
    'cost_nanos',
    record.costNanos === null ? '' : String(record.costNanos),
    'cost_estimated',
    record.costEstimated ? '1' : '0',
    'cache_hit',
    record.cacheHit ? '1' : '0',
  ];
}

/** A stream entry as the API shows it. */
export function recordView(entryId: string, flat: string[]): Record<string, unknown> {
  const fields: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) fields[flat[i]] = flat[i + 1];
  const numbers = [
    'prompt_tokens',
    'completion_tokens',
    'reasoning_tokens',
    'total_tokens',
    'cached_tokens',
    'cache_write_tokens',
    'cache_write_1h_tokens',
    'status',
    'latency_ms',
    'attempts',
  ];
  const view: Record<string, unknown> = { entry_id: entryId };
  for (const [name, value] of Object.entries(fields)) {
    if (numbers.includes(name)) view[name] = Number(value);
    else if (name === 'stream' || name === 'estimated' || name === 'cost_estimated' || name === 'cache_hit')
      view[name] = value === '1';
    // Money in the currency's unit for people; nano-units (exact) beside it for machines.
    else if (name === 'cost_nanos') {
      view.cost = value === '' ? null : nanosToUnits(Number(value));
      view.cost_nanos = value === '' ? null : Number(value);
    } else view[name] = value === '' ? null : value;
  }
  // Records written before costs existed say so: unknown, not free.
  if (!('cost_nanos' in fields)) view.cost = view.cost_nanos = null;
  // Records written before the response cache existed were all answered by a backend.
  if (!('cache_hit' in fields)) view.cache_hit = false;
  return view;
}

/** Nano-units -> the currency's unit, exact to the nano-unit (no float noise such as 0.30000000000000004). */
export function nanosToUnits(nanos: number): number {
  return Number((nanos / 1e9).toFixed(9));
}
