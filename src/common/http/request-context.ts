import type { Principal } from '../../auth/principal';

/** What one request learns on its way through the gateway; the access log prints it. */
export interface RequestContext {
  requestId: string;
  startedAt: bigint;
  clientIp?: string;
  clientHost?: string;
  principal?: Principal;
  model?: string;
  backend?: string;
  upstreamModel?: string;
  stream?: boolean;
  promptTokens?: number;
  completionTokens?: number;
  errorCode?: string;
  /** Set when the client went away before the response was complete. */
  aborted?: boolean;
}

declare module 'express-serve-static-core' {
  interface Request {
    ctx: RequestContext;
  }
}
