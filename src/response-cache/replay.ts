import type { ServerResponse } from 'node:http';
import { writeJsonText } from '../common/http/write-json';
import { openSse } from '../core/sse-writer';
import { CACHE_HEADER } from './cached-request';
import type { CachedAnswer } from './cached-answer';

/**
 * Answers from the cache: the bytes the first request's client got, as they were (a stream as the same SSE
 * events, in one write; a whole answer as the same JSON), with `x-switchyard-cache: hit`.
 */
export function replayAnswer(answer: CachedAnswer, res: ServerResponse): void {
  res.setHeader(CACHE_HEADER, 'hit');
  if (!answer.stream) return writeJsonText(res, answer.body);
  openSse(res);
  res.end(answer.body);
}
