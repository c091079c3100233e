// The request log as the console reads it (GET /admin/v1/requests and /admin/v1/requests/{id}): the entry of
// src/request-log/request-log-entry.ts (types only, no server code), with what the admin API adds.
import type { RequestLogEntry } from '../../request-log/request-log-entry';
import type { AttemptRecord } from '../../core/request-outcome';
import { api } from './api';

export type Attempt = AttemptRecord;

export interface RequestEntry extends RequestLogEntry {
  /** In the billing currency (the list's `currency`); null when the model has no price. */
  cost: number | null;
}

/** A side of the content too big to keep whole: the beginning of its JSON, as text. */
export interface TruncatedSide {
  truncated: true;
  chars: number;
  text: string;
}

/** One entry with what was sent and answered, redacted; null when the team keeps no content (or it expired). */
export interface RequestDetail extends RequestEntry {
  /** The billing currency `cost` is in. */
  currency: string;
  content: { request: unknown; response: unknown } | null;
}

export interface RequestPage {
  currency: string;
  data: RequestEntry[];
  /** The `after` of the next (older) page; null on the last. */
  next: string | null;
}

/** The list's filters, as the admin API names them (an empty string: no filter). */
export interface RequestFilter {
  team: string;
  model: string;
  status: string;
  outcome: string;
  endpoint: string;
  from: string;
  to: string;
  traceId: string;
}

export const NO_FILTER: RequestFilter = {
  team: '',
  model: '',
  status: '',
  outcome: '',
  endpoint: '',
  from: '',
  to: '',
  traceId: '',
};

/** How a request can end (usage-record.ts, UsageOutcome). */
export const OUTCOMES = ['ok', 'error', 'aborted', 'rejected'];

/** The endpoints an entry can name (request-log-entry.ts; the MCP ones: src/mcp/mcp-call-log.ts). */
export const ENDPOINTS = [
  'chat.completions',
  'messages',
  'responses',
  'embeddings',
  'mcp.tools/call',
  'mcp.prompts/get',
  'mcp.resources/read',
];

/** A request to an MCP server (a tool call, a prompt get, a resource read): no tokens, no cost, no attempts. */
export function isMcp(entry: Pick<RequestLogEntry, 'endpoint'>): boolean {
  return entry.endpoint.startsWith('mcp.');
}

/** What an MCP entry's `model` names, by its endpoint: the tool, the prompt, or the resource (its URI). */
export function mcpTargetLabel(entry: Pick<RequestLogEntry, 'endpoint'>): string {
  if (entry.endpoint === 'mcp.prompts/get') return 'Prompt';
  if (entry.endpoint === 'mcp.resources/read') return 'Resource';
  return 'Tool';
}

export async function listRequests(
  filter: RequestFilter,
  limit: number,
  after: string,
): Promise<RequestPage> {
  const query = new URLSearchParams({ limit: String(limit) });
  for (const [key, value] of Object.entries(filter)) if (value) query.set(key, value);
  if (after) query.set('after', after);
  return api<RequestPage>('GET', `/admin/v1/requests?${query}`);
}

export function getRequest(id: string): Promise<RequestDetail> {
  return api<RequestDetail>('GET', `/admin/v1/requests/${encodeURIComponent(id)}`);
}

/** A `datetime-local` value (`2026-11-27T10:42`), read as UTC like every time the console shows, as ISO 8601. */
export function utcInstant(local: string): string {
  if (!local) return '';
  const at = new Date(/[zZ]|[+-]\d\d:\d\d$/.test(local) ? local : `${local}Z`);
  return Number.isNaN(at.getTime()) ? '' : at.toISOString();
}

/** An ISO instant back as a `datetime-local` value in UTC (for the form filled again). */
export function localInput(iso: string): string {
  return iso ? iso.slice(0, 16) : '';
}

/** Where each attempt's bar starts and how long it is, as fractions of the timeline (attempts run one after another). */
export function timeline(attempts: Attempt[], latencyMs: number): Array<{ start: number; width: number }> {
  const calls = attempts.map((a) => (a.kind === 'call' ? Math.max(0, a.durationMs) : 0));
  const total = Math.max(
    latencyMs,
    calls.reduce((sum, ms) => sum + ms, 0),
    1,
  );
  let at = 0;
  return calls.map((ms) => {
    const bar = { start: at / total, width: ms / total };
    at += ms;
    return bar;
  });
}
