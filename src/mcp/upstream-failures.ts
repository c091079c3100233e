import { mcpSdk } from './mcp-sdk';

/**
 * What a request to a server was: a `list` (tools/list, prompts/list, resources/list, templates/list: asks nothing
 * of a tool, and every team's view of the server rests on it), a `read` (resources/read, prompts/get: safe to send
 * twice), or a `call` (tools/call: it may act, so it is never sent twice once it may have reached the server).
 */
export type UpstreamRequestKind = 'list' | 'read' | 'call';

/** Where the request was when it failed: making the connection (handshake), or asking on one that was up. */
export type UpstreamPhase = 'connecting' | 'asking';

/**
 * Why a request to a server failed, as the gateway acts on it (docs/mcp.md, when a server is down or slow):
 * - `server`: the server failed (it could not be connected to, its transport failed: refused, reset, HTTP 401 or 403
 *   from its endpoint, HTTP 5xx on a list, its process gone; or a list timed out). Counts towards its back-off. `lost`: the
 *   connection that was up is gone (the next request, or a retry, connects again); `unsent`: the request certainly
 *   did not reach the server (no connection to send it on, connection refused, its session unknown to the server).
 * - `request`: this request failed (a call, read or prompt that timed out or got an HTTP 5xx, often a proxy's
 *   502/504; an answer the client could not read; an HTTP 4xx refusing this request): the server's standing is unchanged.
 */
export type UpstreamFailureClass =
  | { blame: 'server'; reason: 'unavailable' | 'timeout'; lost: boolean; unsent: boolean }
  | { blame: 'request'; reason: 'unavailable' | 'timeout' };

/** Network errors of a connection that was there (its peer went away mid-exchange). */
const LOST_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'ECONNABORTED']);
/** Network errors before anything was sent. */
const UNSENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * Classifies an error that is not an answer of the server's (its JSON-RPC errors are told apart before this) and
 * not a timeout: see UpstreamFailureClass.
 */
export function classifyFailure(
  error: unknown,
  phase: UpstreamPhase,
  kind: UpstreamRequestKind,
  timedOut: boolean,
): UpstreamFailureClass {
  if (timedOut)
    return phase === 'connecting' || kind === 'list'
      ? { blame: 'server', reason: 'timeout', lost: false, unsent: false }
      : { blame: 'request', reason: 'timeout' };
  const server = (lost: boolean, unsent: boolean) =>
    ({ blame: 'server', reason: 'unavailable', lost, unsent }) as const;
  const { SdkError, SdkErrorCode } = mcpSdk();
  if (error instanceof SdkError) {
    if (error.code === SdkErrorCode.NotConnected) return server(true, true);
    if (error.code === SdkErrorCode.ConnectionClosed) return server(true, false);
    const status = (error.data as { status?: unknown } | undefined)?.status;
    if (typeof status === 'number') {
      // A stateful server that forgot the session refuses it unread: connect again (a new session).
      if (status === 404 && phase === 'asking') return server(true, true);
      // 401/403: the server's credential is refused, for every team. A 5xx (often a proxy's 502/504 on one slow
      // request) is the server's only while connecting or on a list; on a call, read or prompt get it is that
      // request's failure, so one slow tool does not open the back-off for everyone.
      if (status === 401 || status === 403 || phase === 'connecting') return server(false, false);
      if (status >= 500 && kind === 'list') return server(false, false);
      return { blame: 'request', reason: 'unavailable' };
    }
  }
  // The SDK's protocol layer refuses a request when its transport is gone, before sending it.
  if (error instanceof Error && error.message === 'Not connected') return server(true, true);
  const code = networkCode(error);
  if (code !== undefined && UNSENT_CODES.has(code)) return server(true, true);
  if (code !== undefined && LOST_CODES.has(code)) return server(true, false);
  // fetch's own failure without a known code: the transport failed, whether it sent or not is unknown.
  if (error instanceof TypeError && error.message === 'fetch failed') return server(true, false);
  if (phase === 'connecting') return server(false, false);
  return { blame: 'request', reason: 'unavailable' };
}

/** The system error code of a network failure (fetch puts it on its error's cause). */
function networkCode(error: unknown): string | undefined {
  for (let at = error, depth = 0; at instanceof Error && depth < 4; at = at.cause, depth++) {
    const code = (at as { code?: unknown }).code;
    if (typeof code === 'string' && (LOST_CODES.has(code) || UNSENT_CODES.has(code))) return code;
  }
  return undefined;
}
