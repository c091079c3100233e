import { Injectable } from '@nestjs/common';
import type { ServerResponse as Response } from 'node:http';
import { GatewayConfig } from '../config/config.schema';
import { GatewayException } from '../core/errors/gateway.exception';
import { toGatewayException } from '../core/errors/error-response';
import { AppLogger } from '../common/logging/logger';
import { MetricsService } from '../metrics/metrics.service';
import type { StreamEvents, StreamStep } from '../providers/provider-adapter';
import type { ChatCompletionChunk, Usage } from '../core/openai-types';
import type { SseEvent } from '../core/sse';
import { backendSecrets, scrubError } from '../providers/upstream-errors';
import { TokenCounter } from '../usage/token-counter';
import { AbortedWithUsage, isAbort, replyError } from '../providers/upstream-client';
import { openSse } from '../core/sse-writer';
import type { StreamEncoder } from './stream-encoder';
import { KeepAlives } from './keep-alives';

export interface RelayRequest {
  res: Response;
  /** The answer's stream as its family decoded it (ProviderAdapter.decodeStream). */
  events: StreamEvents;
  /** For error messages: which backend's reply failed. */
  backendId: string;
  /** Writes what the client's API expects (OpenAI chunks, Anthropic events). */
  encoder: StreamEncoder;
  signal: AbortSignal;
}

export interface RelayOutcome {
  usage?: Usage;
  completed: boolean;
  aborted: boolean;
  error?: GatewayException;
  /**
   * The generated text relayed to the client (content, reasoning, tool-call
   * arguments), kept so a stream that ends without the upstream's usage can still
   * be accounted with a tokenizer estimate.
   */
  relayedText: string[];
  /** The reasoning text alone (to count reasoning tokens when the upstream does not). */
  reasoningText: string[];
  /** True when reasoning_tokens in the usage were counted by the gateway. */
  reasoningEstimated?: boolean;
  /** When the first generated token (content, reasoning or a tool call) went to the client. */
  firstTokenAt?: bigint;
}

/**
 * A family's decoded stream -> the client's encoder -> client SSE, with no buffering: the events of each upstream
 * read are written, in one write, the moment they are decoded. Backpressure is honoured (we stop reading upstream
 * while the client's socket is full). It knows nothing of the upstream's transport (SSE, a worker's messages).
 */
@Injectable()
export class StreamRelay {
  /** Every open stream's keep-alive comments, from one timer. */
  readonly keepAlives: KeepAlives;

  constructor(
    private readonly config: GatewayConfig,
    private readonly logger: AppLogger,
    private readonly metrics: MetricsService,
    private readonly counter: TokenCounter,
  ) {
    this.keepAlives = new KeepAlives(config.server.sseKeepAliveMs);
  }

  /**
   * Pumps the upstream stream to the client until it completes, fails or the client
   * leaves. It does not end the response: the caller accounts first, then calls
   * `finish`, so the access log and usage always see the final counts.
   */
  async relay(request: RelayRequest): Promise<RelayOutcome> {
    const { res, encoder, signal } = request;
    const outcome: RelayOutcome = { completed: false, aborted: false, relayedText: [], reasoningText: [] };
    let sawFinish = false;
    openSse(res);
    this.metrics.openStreams.inc();
    const keepAlive = this.keepAlives.watch(res);
    let ended = false; // the upstream's end marker ([DONE], message_stop) was seen
    const batches = request.events[Symbol.asyncIterator]();
    /** Accounts one mapped step's chunks (usage, text, first token); true when one of them finished a choice. */
    const take = async (step: StreamStep): Promise<boolean> => {
      let finished = false;
      const textBefore = outcome.relayedText.length;
      for (const chunk of step.chunks) {
        if (chunk.usage) {
          outcome.reasoningEstimated =
            (await this.counter.fillReasoningTokens(chunk.usage, outcome.reasoningText)) ||
            outcome.reasoningEstimated;
          outcome.usage = chunk.usage;
        }
        if (chunk.choices?.some((choice) => choice.finish_reason)) finished = true;
        collectText(chunk, outcome.relayedText, outcome.reasoningText);
      }
      if (outcome.firstTokenAt === undefined && outcome.relayedText.length > textBefore)
        outcome.firstTokenAt = process.hrtime.bigint();
      return finished;
    };
    try {
      while (!ended) {
        const next = await batches.next();
        if (next.done) break;
        let full = false;
        let out = '';
        try {
          for (const step of next.value) {
            const event = step.upstream ?? NO_UPSTREAM_EVENT;
            if (step.delta) {
              // An ordinary content delta (read without parsing): no usage, no finish, no end marker; only its text.
              if (step.delta.text) {
                outcome.relayedText.push(step.delta.text);
                outcome.firstTokenAt ??= process.hrtime.bigint();
              }
              out += encoder.event(event, step);
              continue;
            }
            if (await take(step)) sawFinish = true;
            out += encoder.event(event, step);
            if (step.done) {
              ended = true;
              break;
            }
          }
        } finally {
          // Events that arrived together leave together, as one write: one syscall and one chunk of the chunked
          // encoding instead of one per event (the largest cost of a stream). Nothing waits for more input, so
          // no chunk is held back. The last batch stays corked: `finish` adds [DONE] and the end of the response
          // to the same write.
          if (ended) res.cork();
          if (out) full = !res.write(out);
        }
        keepAlive.wrote();
        if (full && !ended) await drained(res);
      }
      // What follows the end marker is drained in the background, not abandoned: leaving an iterator early
      // destroys the body (an AbortError with a stack trace per request, and the pooled connection).
      if (ended) void drainQuietly(batches);
      // Some servers close without [DONE]; a stream that reached finish_reason is still whole.
      if (!sawFinish && !outcome.usage)
        throw new GatewayException('upstream_error', 'The backend ended the stream early.');
      outcome.completed = true;
    } catch (error) {
      // An abandoned stream whose backend reported what it had spent is accounted with that, not an estimate.
      if (error instanceof AbortedWithUsage && error.usage) outcome.usage = error.usage;
      // The gateway ended it (shutdown deadline): the client gets that reason in-band; it did not leave.
      if (signal.aborted && signal.reason instanceof GatewayException) outcome.error = signal.reason;
      else if (signal.aborted || isAbort(error)) outcome.aborted = true;
      // An in-band error event carries the vendor's words, read by a mapper that holds no keys: scrubbed here, for
      // every family and client API, before the client, the stored response or the log can see it.
      else
        outcome.error = scrubError(
          toGatewayException(replyError(request.backendId, error), this.logger.pino),
          backendSecrets(this.config.backends[request.backendId] ?? {}),
        );
    } finally {
      keepAlive.stop();
      this.metrics.openStreams.dec();
    }
    return outcome;
  }

  /** Ends the client's stream: the encoder's closing events after success, an in-band error after a failure. */
  finish(res: Response, outcome: RelayOutcome, encoder: StreamEncoder): void {
    if (res.writableEnded) return;
    const tail = outcome.completed ? encoder.end(outcome) : outcome.error ? encoder.error(outcome.error) : '';
    endCorked(res, tail);
  }
}

/** What a translating encoder is given as the upstream event when the family decoded none (it reads the step). */
const NO_UPSTREAM_EVENT: SseEvent = { data: '' };

function collectText(chunk: ChatCompletionChunk, into: string[], reasoning: string[]): void {
  for (const choice of chunk.choices ?? []) {
    const delta = choice.delta;
    if (typeof delta?.content === 'string' && delta.content) into.push(delta.content);
    if (typeof delta?.reasoning_content === 'string' && delta.reasoning_content) {
      into.push(delta.reasoning_content);
      reasoning.push(delta.reasoning_content);
    }
    if (Array.isArray(delta?.tool_calls)) {
      for (const call of delta.tool_calls as Array<{ function?: { name?: unknown; arguments?: unknown } }>) {
        if (typeof call.function?.name === 'string') into.push(call.function.name);
        if (typeof call.function?.arguments === 'string') into.push(call.function.arguments);
      }
    }
  }
}

/**
 * Ends a response whose last batch `relay` left corked, with the closing events in the same socket write. Not
 * `res.end(tail)`: on Node 24 (seen on 24.21; 20 is fine), when the headers already left on their own (flushHeaders,
 * a slow first event) end() writes the terminating zero-length chunk *before* the chunks the cork buffered, so the
 * client reads an empty body and the rest arrives after the end. Flushing our cork first, into the socket corked
 * once more, keeps the order and still sends batch, tail and terminator in one write when end() uncorks the socket.
 */
function endCorked(res: Response, tail: string): void {
  if (!res.writableCorked) {
    res.end(tail);
    return;
  }
  if (tail) res.write(tail);
  res.socket?.cork();
  while (res.writableCorked) res.uncork();
  res.end();
}

async function drainQuietly(batches: AsyncIterator<unknown>): Promise<void> {
  try {
    while (!(await batches.next()).done);
  } catch {
    // The client already has the whole answer; a failure after the end marker changes nothing for it.
  }
}

/** Resolves when the socket can take more, or when it is gone (never hangs on a dead client). */
function drained(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}
