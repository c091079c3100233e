import type { ChatRequest } from '../core/chat-request';
import type { UpstreamCall } from '../core/upstream-call';
import type { Deployment } from '../routing/deployment';

/** One upstream call as its span describes it. */
export interface TracedCall {
  operation: 'chat' | 'embeddings';
  deployment: Deployment;
  /** The configured model it was routed as: the one asked for, or a fallback. */
  model: string;
  fallback: boolean;
  /** A chat call's request (its parameters, and its messages for a team that keeps content). */
  chat?: ChatRequest;
}

/**
 * A traced request's spans (telemetry/, docs/tracing.md), as the pipeline and the usage recorder drive them: the
 * SERVER span from the usage recorder's start to the response's end, and a CLIENT span per upstream call. Only a
 * request of a gateway with `telemetry.otlp` has one (`Exchange.trace`); everything else skips it with one check.
 */
export interface RequestTrace {
  /** The server span's trace id (the caller's, when it sent a traceparent): the request log's `traceId`. */
  readonly traceId: string;
  /** A call is about to be sent: its CLIENT span starts and its `traceparent` is added to the call's headers. */
  calling(call: UpstreamCall, target: TracedCall): void;
  /** The call under way failed (a retry or a fallback may follow): its span ends with the error. */
  callFailed(error: unknown): void;
  /** The response has closed: the answering call's span and the server span end. */
  end(statusCode: number): void;
}
