/**
 * The token counter's worker thread: counts texts with the same bounded o200k counter the gateway uses, off
 * the gateway's event loop (see token-counter.ts).
 */
import { parentPort } from 'node:worker_threads';
import { countTokens, loadTokenizer } from './token-estimator';

export interface CountJob {
  id: number;
  texts: readonly string[];
}

loadTokenizer();
parentPort?.on('message', (job: CountJob) => {
  let total = 0;
  for (const text of job.texts) total += countTokens(text);
  parentPort!.postMessage({ id: job.id, total });
});
