import type { RequestLogEntry } from './request-log-entry';
import type { RequestLogFilter } from './request-log.repository';

/** Where an entry sits in the log's order: newest first by start time, then by id (descending) within one ms. */
export interface Position {
  at: number;
  id: string;
}

/** Whether `a` comes before `b` in the log's order (newer, or as new with a greater id). */
export function isNewer(a: Position, b: Position): boolean {
  return a.at !== b.at ? a.at > b.at : a.id > b.id;
}

/** The `next` cursor of a page: opaque to clients (base64url of the position). */
export function encodeCursor(position: Position): string {
  return Buffer.from(`${position.at}|${position.id}`).toString('base64url');
}

/** A cursor back into a position; throws for one that is not a cursor this store gave out. */
export function decodeCursor(cursor: string): Position {
  const [at, ...id] = Buffer.from(cursor, 'base64url').toString().split('|');
  const position = { at: Number(at), id: id.join('|') };
  if (!Number.isSafeInteger(position.at) || position.id === '') throw new InvalidCursorError();
  return position;
}

/** `after` is not a cursor of this log. */
export class InvalidCursorError extends Error {
  constructor() {
    super('not a cursor of this request log');
  }
}

/** Whether an entry passes a query's filters (the stores that filter in memory use it; SQL says the same). */
export function matches(entry: RequestLogEntry, filter: RequestLogFilter): boolean {
  if (filter.team !== undefined && entry.team !== filter.team) return false;
  if (filter.teams !== undefined && !filter.teams.includes(entry.team)) return false;
  if (filter.model !== undefined && entry.model !== filter.model && entry.servedModel !== filter.model)
    return false;
  if (filter.status !== undefined && entry.status !== filter.status) return false;
  if (filter.endpoint !== undefined && entry.endpoint !== filter.endpoint) return false;
  if (filter.outcome !== undefined && entry.outcome !== filter.outcome) return false;
  if (filter.traceId !== undefined && entry.traceId !== filter.traceId) return false;
  const at = Date.parse(entry.at);
  if (filter.from !== undefined && at < Date.parse(filter.from)) return false;
  if (filter.to !== undefined && at >= Date.parse(filter.to)) return false;
  return true;
}
