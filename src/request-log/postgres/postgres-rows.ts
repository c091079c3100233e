import type { UsageOutcome } from '../../usage/usage-record';
import type {
  LoggedAttempt,
  RequestLogContent,
  RequestLogEntry,
  RequestLogRecord,
} from '../request-log-entry';

/**
 * PostgreSQL's text refuses the NUL character (and jsonb its `\u0000` escape); a client can put one in any string
 * it sends (a model name, an error it provokes). It becomes U+FFFD rather than failing the whole batch.
 */
function text(value: string): string;
function text(value: string | null | undefined): string | null;
function text(value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return value.includes('\0') ? value.replaceAll('\0', '\uFFFD') : value;
}

function jsonbText(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) => (typeof inner === 'string' ? text(inner) : inner));
}

/**
 * The metadata columns, each with its array type: a batch is inserted as one `INSERT ... SELECT FROM unnest(...)`
 * with one array parameter per column, whatever its size (a multi-row VALUES list would need a parameter per value,
 * and PostgreSQL takes at most 65,535).
 */
const ENTRY_COLUMNS: readonly [column: string, type: string, value: (entry: RequestLogEntry) => unknown][] = [
  ['id', 'text', (e) => text(e.id)],
  ['at', 'timestamptz', (e) => e.at],
  ['request_id', 'text', (e) => text(e.requestId)],
  ['team', 'text', (e) => text(e.team)],
  ['token_id', 'text', (e) => text(e.token.id)],
  ['token_name', 'text', (e) => text(e.token.name)],
  ['person_subject', 'text', (e) => text(e.person?.subject)],
  ['person_email', 'text', (e) => text(e.person?.email)],
  ['endpoint', 'text', (e) => text(e.endpoint)],
  ['stream', 'boolean', (e) => e.stream],
  ['model', 'text', (e) => text(e.model)],
  ['served_model', 'text', (e) => text(e.servedModel)],
  ['deployment', 'text', (e) => text(e.deployment)],
  ['attempts', 'jsonb', (e) => jsonbText(e.attempts)],
  ['status', 'integer', (e) => e.status],
  ['outcome', 'text', (e) => e.outcome],
  ['error_code', 'text', (e) => text(e.errorCode)],
  ['latency_ms', 'double precision', (e) => e.latencyMs],
  ['ttfb_ms', 'double precision', (e) => e.ttfbMs],
  ['prompt_tokens', 'integer', (e) => e.usage.prompt],
  ['completion_tokens', 'integer', (e) => e.usage.completion],
  ['reasoning_tokens', 'integer', (e) => e.usage.reasoning],
  ['cached_tokens', 'integer', (e) => e.usage.cached],
  ['cache_write_tokens', 'integer', (e) => e.usage.cacheWrite],
  ['cache_write_1h_tokens', 'integer', (e) => e.usage.cacheWrite1h],
  ['estimated', 'boolean', (e) => e.usage.estimated],
  ['cost_nanos', 'bigint', (e) => (e.costNanos === null ? null : Math.round(e.costNanos))],
  ['trace_id', 'text', (e) => text(e.traceId)],
  ['client_address', 'text', (e) => text(e.clientAddress)],
  ['content_kept', 'boolean', (e) => e.contentKept],
  ['cache_hit', 'boolean', (e) => e.cacheHit],
];

/** The metadata columns as a select list (`get` and `query` read them all), of the table aliased `alias`. */
export function entrySelect(alias?: string): string {
  return ENTRY_COLUMNS.map(([column]) => (alias ? `${alias}.${column}` : column)).join(', ');
}

/**
 * One statement writing a batch, metadata and content together (a data-modifying CTE: one round trip, all or
 * nothing); an entry already there (same `at` and id: a batch written again) is skipped, in both tables.
 */
export function appendStatement(schema: string): string {
  const entryArrays = ENTRY_COLUMNS.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ');
  const n = ENTRY_COLUMNS.length;
  return `WITH entries AS (
      INSERT INTO ${schema}.request_log (${entrySelect()})
      SELECT * FROM unnest(${entryArrays})
      ON CONFLICT DO NOTHING
    )
    INSERT INTO ${schema}.request_log_content (id, at, team, request, response)
    SELECT * FROM unnest($${n + 1}::text[], $${n + 2}::timestamptz[], $${n + 3}::text[], $${n + 4}::json[],
      $${n + 5}::json[])
    ON CONFLICT DO NOTHING`;
}

/** The statement's parameters: one array per metadata column, then the content's five. */
export function appendParameters(records: readonly RequestLogRecord[]): unknown[] {
  const entries = ENTRY_COLUMNS.map(([, , value]) => records.map(({ entry }) => value(entry)));
  const kept = records.filter((record) => record.content !== undefined);
  const content = [
    kept.map(({ entry }) => text(entry.id)),
    kept.map(({ entry }) => entry.at),
    kept.map(({ entry }) => text(entry.team)),
    // `json` accepts what JSON.stringify writes (NUL escapes included); undefined (no body) is kept as null.
    kept.map(({ content }) => JSON.stringify(content?.request ?? null)),
    kept.map(({ content }) => JSON.stringify(content?.response ?? null)),
  ];
  return [...entries, ...content];
}

/** A metadata row as node-postgres reads it (timestamptz as a Date, bigint as a string, jsonb parsed). */
export interface EntryRow {
  id: string;
  at: Date;
  request_id: string;
  team: string;
  token_id: string;
  token_name: string | null;
  person_subject: string | null;
  person_email: string | null;
  endpoint: string;
  stream: boolean;
  model: string;
  served_model: string;
  deployment: string | null;
  attempts: LoggedAttempt[];
  status: number;
  outcome: string;
  error_code: string | null;
  latency_ms: number;
  ttfb_ms: number | null;
  prompt_tokens: number;
  completion_tokens: number;
  reasoning_tokens: number;
  cached_tokens: number;
  cache_write_tokens: number;
  cache_write_1h_tokens: number;
  estimated: boolean;
  cost_nanos: string | null;
  trace_id: string | null;
  client_address: string | null;
  content_kept: boolean;
  cache_hit: boolean;
}

export function entryFromRow(row: EntryRow): RequestLogEntry {
  return {
    id: row.id,
    requestId: row.request_id,
    at: row.at.toISOString(),
    team: row.team,
    token: { id: row.token_id, name: row.token_name },
    person:
      row.person_subject === null
        ? null
        : row.person_email === null
          ? { subject: row.person_subject }
          : { subject: row.person_subject, email: row.person_email },
    endpoint: row.endpoint,
    stream: row.stream,
    model: row.model,
    servedModel: row.served_model,
    deployment: row.deployment,
    attempts: row.attempts,
    status: row.status,
    outcome: row.outcome as UsageOutcome,
    errorCode: row.error_code,
    latencyMs: row.latency_ms,
    ttfbMs: row.ttfb_ms,
    usage: {
      prompt: row.prompt_tokens,
      completion: row.completion_tokens,
      reasoning: row.reasoning_tokens,
      cached: row.cached_tokens,
      cacheWrite: row.cache_write_tokens,
      cacheWrite1h: row.cache_write_1h_tokens,
      estimated: row.estimated,
    },
    costNanos: row.cost_nanos === null ? null : Number(row.cost_nanos),
    traceId: row.trace_id,
    clientAddress: row.client_address,
    contentKept: row.content_kept,
    cacheHit: row.cache_hit,
  };
}

export function contentFromRow(row: { request: unknown; response: unknown }): RequestLogContent {
  return { request: row.request, response: row.response };
}
