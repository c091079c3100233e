/** What a load run did: requests sent, answered with 200, and the others by status (or error code). */
export interface LoadTally {
  sent: number;
  answered: number;
  failed: Record<string, number>;
}

/**
 * Sends small chat requests (model `echo`) with `concurrency` workers, spread over the gateway URLs, until
 * `during` settles; then waits for the requests in flight. Counts into `tally` as it goes, so `during` can
 * watch progress.
 */
export async function loadUntil(
  urls: string[],
  token: string,
  concurrency: number,
  tally: LoadTally,
  during: () => Promise<void>,
): Promise<void> {
  let running = true;
  const worker = async (index: number) => {
    for (let i = index; running; i += concurrency) {
      tally.sent++;
      const status = await fetch(`${urls[i % urls.length]}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'echo', messages: [{ role: 'user', content: `request ${i}` }] }),
      }).then(
        async (response) => {
          await response.arrayBuffer();
          return response.status;
        },
        (error: Error & { cause?: { code?: string } }) => error.cause?.code ?? error.message,
      );
      if (status === 200) tally.answered++;
      else tally.failed[status] = (tally.failed[status] ?? 0) + 1;
    }
  };
  const workers = Array.from({ length: concurrency }, (_, i) => worker(i));
  try {
    await during();
  } finally {
    running = false;
    await Promise.all(workers);
  }
}

/**
 * `count` calls of `make`, at most `limit` in flight at once, results in call order. For tests that need many
 * requests but not a connection storm: a thousand connections opened in the same instant overflow the listen
 * queue of a loaded machine and get resets that have nothing to do with what the test checks (that is the
 * benchmarks' and the capacity test's business).
 */
export async function inFlight<T>(
  count: number,
  limit: number,
  make: (index: number) => Promise<T>,
): Promise<T[]> {
  const results = new Array<T>(count);
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < count; index = next++) results[index] = await make(index);
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
  return results;
}
