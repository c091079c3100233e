import type {
  RequestLogContent,
  RequestLogEntry,
  RequestLogRecord,
} from '../../src/request-log/request-log-entry';
import { decodeCursor, encodeCursor, isNewer, matches } from '../../src/request-log/request-log-query';
import type {
  RequestLogPage,
  RequestLogQuery,
  RequestLogStore,
} from '../../src/request-log/request-log.repository';

/**
 * The request log's store in memory, for unit tests of the writer and the service: keeps entries by id (a retried
 * batch writes nothing twice), answers queries with the shared filter and cursor, and can be made to fail or hang.
 */
export class InMemoryRequestLogStore implements RequestLogStore {
  readonly entries = new Map<string, RequestLogEntry>();
  readonly contents = new Map<string, RequestLogContent>();
  /** Every batch append was called with, in order (retries included). */
  readonly batches: RequestLogRecord[][] = [];
  /** The next this many appends reject. */
  failNext = 0;
  /** While set, appends never settle (a store that took the connection and went quiet). */
  hang = false;
  closed = false;

  async append(records: readonly RequestLogRecord[]): Promise<{ evicted: number }> {
    this.batches.push([...records]);
    if (this.hang) return new Promise(() => undefined);
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error('store refused the batch');
    }
    for (const { entry, content } of records) {
      if (this.entries.has(entry.id)) continue;
      this.entries.set(entry.id, entry);
      if (content) this.contents.set(entry.id, content);
    }
    return { evicted: 0 };
  }

  async query(query: RequestLogQuery): Promise<RequestLogPage> {
    const after = query.after !== undefined ? decodeCursor(query.after) : undefined;
    const position = (entry: RequestLogEntry) => ({ at: Date.parse(entry.at), id: entry.id });
    const found = [...this.entries.values()]
      .filter((entry) => matches(entry, query) && (!after || isNewer(after, position(entry))))
      .sort((a, b) => (isNewer(position(a), position(b)) ? -1 : 1));
    const entries = found.slice(0, query.limit);
    const last = entries.at(-1);
    return { entries, next: found.length > query.limit && last ? encodeCursor(position(last)) : null };
  }

  async get(id: string) {
    const entry = this.entries.get(id);
    return entry ? { entry, content: this.contents.get(id) ?? null } : null;
  }

  async expire(): Promise<void> {}

  async close(): Promise<void> {
    this.closed = true;
  }
}
