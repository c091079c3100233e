import { AppLogger } from '../../src/common/logging/logger';
import { InFlightTracker } from '../../src/lifecycle/in-flight.tracker';
import { MetricsService } from '../../src/metrics/metrics.service';
import { MAX_KEPT_CHARS } from '../../src/request-log/kept-content';
import { RequestLogRedactor } from '../../src/request-log/request-log-redactor';
import { GATHER_MS, RequestLogWriter } from '../../src/request-log/request-log-writer';
import { buildConfig } from '../support/config';
import { eventually } from '../support/eventually';
import { InMemoryRequestLogStore } from '../support/in-memory-request-log';
import { logEntry as entry } from '../support/request-log-entry-fixture';

/**
 * The request log's writer against the in-memory store: batches, the bounded queue, retries and what is counted
 * when an entry cannot be kept, redaction of content on the way to the store, shutdown.
 */
function setup(requests: Record<string, unknown> = {}) {
  const config = buildConfig({ admin: { apiKey: 'k' }, logging: { requests } }, {});
  const store = new InMemoryRequestLogStore();
  const metrics = new MetricsService(config, new InFlightTracker());
  const lines: Array<Record<string, unknown>> = [];
  const logger = new AppLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
  const writer = new RequestLogWriter(store, new RequestLogRedactor(config), config, metrics, logger);
  const dropped = async (reason: string) =>
    (await metrics.requestLogDropped.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;
  const written = async () => (await metrics.requestLogWritten.get()).values[0]?.value ?? 0;
  return { writer, store, metrics, lines, dropped, written };
}

describe('RequestLogWriter', () => {
  afterEach(() => jest.useRealTimers());

  it('writes entries enqueued together in one batch, then counts them written', async () => {
    const { writer, store, written } = setup();
    for (let i = 0; i < 5; i++) writer.enqueue({ entry: entry(`e${i}`) });
    expect(store.batches).toHaveLength(0); // never on the caller's turn
    await eventually(() => expect(store.entries.size).toBe(5));
    expect(store.batches.map((batch) => batch.length)).toEqual([5]);
    expect(await written()).toBe(5);
  });

  it('gathers the entries of a few milliseconds into one batch, the first waiting at most GATHER_MS', async () => {
    jest.useFakeTimers();
    const { writer, store } = setup();
    writer.enqueue({ entry: entry('g1') });
    await jest.advanceTimersByTimeAsync(GATHER_MS - 5);
    writer.enqueue({ entry: entry('g2') });
    expect(store.batches).toHaveLength(0);
    await jest.advanceTimersByTimeAsync(5);
    expect(store.batches.map((batch) => batch.map((record) => record.entry.id))).toEqual([['g1', 'g2']]);
  });

  it('redacts content on its way to the store, and keeps a side too big to keep whole as its redacted beginning', async () => {
    const { writer, store } = setup();
    const big = `write to a@example.com ${'x'.repeat(MAX_KEPT_CHARS)}`;
    writer.enqueue({
      entry: entry('c1', { contentKept: true }),
      content: {
        request: {
          messages: [
            {
              role: 'user',
              content: 'my card 4111 1111 1111 1111, key sk-proj-abcdefghijklmnopqrstuvwxyz123456',
            },
          ],
        },
        response: [{ role: 'assistant', content: big }],
      },
    });
    await eventually(() => expect(store.contents.size).toBe(1));
    const kept = store.contents.get('c1')!;
    expect(kept.request).toEqual({ messages: [{ role: 'user', content: 'my card [card], key [api_key]' }] });
    expect(kept.response).toMatchObject({
      truncated: true,
      chars: JSON.stringify([{ role: 'assistant', content: big }]).length,
    });
    const text = (kept.response as { text: string }).text;
    expect(text.startsWith('[{"role":"assistant","content":"write to [email] x')).toBe(true);
    expect(text.length).toBeLessThanOrEqual(MAX_KEPT_CHARS);
  });

  it('a full queue drops its oldest entry and counts it (queue_full); the newest are kept', async () => {
    const { writer, store, dropped } = setup({ queueSize: 100 });
    store.hang = true; // the first batch never returns: everything after it waits in the queue
    writer.enqueue({ entry: entry('first') });
    await eventually(() => expect(store.batches).toHaveLength(1));
    for (let i = 0; i < 130; i++) writer.enqueue({ entry: entry(`q${i}`) });
    expect(writer.backlog).toBe(100);
    expect(await dropped('queue_full')).toBe(30);
  });

  it('retries a refused batch with a growing pause and writes it once; nothing counted as dropped', async () => {
    jest.useFakeTimers();
    const { writer, store, dropped, lines } = setup();
    store.failNext = 3;
    writer.enqueue({ entry: entry('r1') });
    await jest.advanceTimersByTimeAsync(GATHER_MS);
    expect(store.batches).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(499);
    expect(store.batches).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(1); // 500 ms, then 1 s, then 2 s
    expect(store.batches).toHaveLength(2);
    await jest.advanceTimersByTimeAsync(3000);
    expect(store.batches).toHaveLength(4);
    expect([...store.entries.keys()]).toEqual(['r1']);
    expect(await dropped('store_failed')).toBe(0);
    expect(lines.filter((line) => line.level === 40)).toHaveLength(3);
  });

  it('drops and counts a batch the store refuses five times (store_failed), and goes on with the next', async () => {
    jest.useFakeTimers();
    const { writer, store, dropped } = setup();
    store.failNext = 5;
    writer.enqueue({ entry: entry('lost') });
    await jest.advanceTimersByTimeAsync(GATHER_MS);
    writer.enqueue({ entry: entry('next') });
    await jest.advanceTimersByTimeAsync(0.5e3 + 1e3 + 2e3 + 4e3);
    expect(store.batches.slice(0, 5).every((batch) => batch[0].entry.id === 'lost')).toBe(true);
    expect(await dropped('store_failed')).toBe(1);
    await jest.advanceTimersByTimeAsync(0);
    expect([...store.entries.keys()]).toEqual(['next']);
  });

  it('a store that never answers costs each batch its deadline, not the writer forever', async () => {
    jest.useFakeTimers();
    const { writer, store } = setup();
    store.hang = true;
    writer.enqueue({ entry: entry('h1') });
    await jest.advanceTimersByTimeAsync(GATHER_MS);
    expect(store.batches).toHaveLength(1);
    store.hang = false;
    await jest.advanceTimersByTimeAsync(10_000 + 500);
    expect(store.batches).toHaveLength(2);
    expect([...store.entries.keys()]).toEqual(['h1']);
  });

  it('at shutdown writes what is queued, counts what it could not (shutdown) and closes the store', async () => {
    const { writer, store, dropped } = setup();
    writer.enqueue({ entry: entry('s1') });
    await writer.beforeApplicationShutdown();
    expect([...store.entries.keys()]).toEqual(['s1']);
    expect(store.closed).toBe(true);
    writer.enqueue({ entry: entry('late') });
    expect(await dropped('shutdown')).toBe(1);
  });
});
