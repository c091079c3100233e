import type { NativeApi, UpstreamCall } from '../providers/provider-adapter';
import type { Deployment } from '../routing/model-router.service';
import type { StreamEncoder } from '../streaming/stream-encoder';
import type { RelayOutcome } from '../streaming/stream-relay.service';
import type { JsonSource } from '../core/json-splice';

/**
 * The client API a chat-shaped request arrived in. The chat pipeline (routing, admission, deployments and
 * fallbacks, accounting) is the same for every API that asks a model for a completion; what differs is how
 * the answer is written, and whether a deployment speaks the client's API itself (then it gets the client's
 * request natively instead of a translation).
 */
export interface ClientWire {
  /** Deployments that speak the client's API get its request natively (blocks, signatures, beta fields intact). */
  native?: {
    /** The client's API: the family reads a native answer in it as chat, for the accounting. */
    api: NativeApi;
    accepts(deployment: Deployment): boolean;
    call(deployment: Deployment, stream: boolean): UpstreamCall;
  };
  /** How a stream answered by this deployment is written to the client. */
  streamEncoder(deployment: Deployment, native: boolean): StreamEncoder;
  /**
   * `thinking` is a hint this API's clients send to every model (Claude Code asks every model to think):
   * dropped for a model that cannot think instead of refused with a 400.
   */
  thinkingIsAHint?: boolean;
  /** The client's own JSON body, when the request arrived as a chat completion (pass-through families copy from it). */
  source?: JsonSource;
  /** Runs after a stream is accounted and before its closing events are written (the Responses API stores the response here). */
  beforeStreamEnd?(outcome: RelayOutcome): Promise<void>;
}
