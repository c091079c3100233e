import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { ResponseCacheConfig } from '../config/config.schema';
import type { TokenCounts } from '../gateway/exchange';
import type { StreamEncoder } from '../streaming/stream-encoder';
import { AnswerRecorder, recordingEncoder } from './answer-recorder';
import { clientCacheChoice, type ClientCacheChoice } from './cache-control';
import { cacheKey, type CacheableRequest } from './cache-key';
import { parseAnswer, serialiseAnswer, type CachedAnswer } from './cached-answer';
import type { ResponseCacheEntries } from './response-cache.repository';

/** The response header that says what the cache did for a request (absent when the model has no cache). */
export const CACHE_HEADER = 'x-switchyard-cache';

/**
 * What the cache did, as `switchyard_response_cache_total{result}` counts it: `hit` (a request answered from the
 * cache: counted once the limits admitted it), `miss` (looked up, not there), `bypass` (the client's Cache-Control
 * skipped the lookup), `stored`, `too_large` (an answer over the model's maxEntryBytes, not stored), `error` (Redis
 * failed a lookup or a store, or was down: the request went on without the cache).
 */
export type CacheResult = 'hit' | 'miss' | 'bypass' | 'stored' | 'too_large' | 'error';

/** What a cached request needs of the cache: its entries, its counter and its log. */
export interface CacheServices {
  entries: ResponseCacheEntries;
  count(model: string, result: CacheResult): void;
  logger: Logger;
}

/** How an answer was accounted, stored beside it. */
export interface AnswerAccounting {
  tokens: TokenCounts | undefined;
  servedModel: string | undefined;
}

/**
 * One request to a model with a response cache, for a team that uses it: looks its answer up and, on a miss,
 * stores the answer once it is whole. Failures of Redis never fail the request (a lookup that fails is a miss,
 * a store that fails is logged).
 */
export class CachedRequest {
  private keyed?: Promise<string>;
  private readonly choice: ClientCacheChoice;
  private recorder?: AnswerRecorder;

  constructor(
    private readonly services: CacheServices,
    private readonly model: string,
    private readonly settings: ResponseCacheConfig,
    private readonly request: CacheableRequest,
    private readonly res: ServerResponse,
  ) {
    this.choice = clientCacheChoice(request.headers);
  }

  /** The request's key, worked out when first needed (a long body a megabyte per turn: cache-key.ts). */
  private get key(): Promise<string> {
    return (this.keyed ??= cacheKey(this.request));
  }

  /**
   * The stored answer, or undefined (a miss, or skipped: the response says which in its cache header). A hit is
   * counted by `served()`, once the limits have admitted it.
   */
  async lookup(): Promise<CachedAnswer | undefined> {
    if (this.choice !== 'use') {
      this.res.setHeader(CACHE_HEADER, 'bypass');
      this.services.count(this.model, 'bypass');
      return undefined;
    }
    this.res.setHeader(CACHE_HEADER, 'miss'); // a hit's replay says `hit`
    // Redis known to be down: no command (it would wait for the command timeout and its retry on every request).
    if (!this.services.entries.available()) {
      this.services.count(this.model, 'error');
      return undefined;
    }
    let entry: string | null;
    try {
      entry = await this.services.entries.find(this.request.team, await this.key);
    } catch (error) {
      this.services.logger.warn({ err: error, model: this.model }, 'response cache lookup failed');
      this.services.count(this.model, 'error');
      return undefined;
    }
    const answer = entry === null ? undefined : parseAnswer(entry);
    if (!answer) this.services.count(this.model, 'miss');
    return answer;
  }

  /** The looked-up answer is being replayed (replay.ts says `hit`): the request was admitted. */
  served(): void {
    this.services.count(this.model, 'hit');
  }

  /** The stream's encoder, recording what it writes so the whole stream can be stored (unless `no-store`). */
  recording(encoder: StreamEncoder): StreamEncoder {
    if (this.choice === 'no-store') return encoder;
    this.recorder = new AnswerRecorder(this.settings.maxEntryBytes);
    return recordingEncoder(encoder, this.recorder);
  }

  /** Stores the recorded stream: call only for a stream that completed (no error, the client still there). */
  storeStream(accounting: AnswerAccounting): void {
    const recorder = this.recorder;
    if (!recorder) return;
    if (recorder.tooLarge) this.services.count(this.model, 'too_large');
    else this.store(true, recorder.text, accounting);
  }

  /** Stores a whole (JSON) answer the client got with a 200. */
  storeWhole(body: string, accounting: AnswerAccounting): void {
    if (this.choice === 'no-store') return;
    if (Buffer.byteLength(body) > this.settings.maxEntryBytes) this.services.count(this.model, 'too_large');
    else this.store(false, body, accounting);
  }

  /** Written after the answer went out, never awaited by the request. */
  private store(stream: boolean, body: string, accounting: AnswerAccounting): void {
    if (!accounting.tokens) return; // an answer is always counted before it is stored; nothing to replay without
    if (!this.services.entries.available()) return void this.services.count(this.model, 'error');
    const answer: CachedAnswer = {
      stream,
      body,
      tokens: accounting.tokens,
      servedModel: accounting.servedModel ?? this.model,
    };
    this.key
      .then((key) =>
        this.services.entries.save(this.request.team, key, serialiseAnswer(answer), this.settings.ttlSeconds),
      )
      .then(
        () => this.services.count(this.model, 'stored'),
        (error: unknown) => {
          this.services.logger.warn({ err: error, model: this.model }, 'response cache store failed');
          this.services.count(this.model, 'error');
        },
      );
  }
}
