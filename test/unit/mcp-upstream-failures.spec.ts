import { SdkError, SdkErrorCode, SdkHttpError } from '@modelcontextprotocol/client';
import { classifyFailure } from '../../src/mcp/upstream-failures';

function fetchFailed(code: string): TypeError {
  return new TypeError('fetch failed', { cause: Object.assign(new Error(code), { code }) });
}

function http(status: number): SdkHttpError {
  return new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, `Error POSTing to endpoint: ${status}`, {
    status,
    statusText: '',
  });
}

describe("whose failure a failed MCP request is: the server's (its back-off) or the request's alone", () => {
  const server = (lost: boolean, unsent: boolean) => ({
    blame: 'server',
    reason: 'unavailable',
    lost,
    unsent,
  });

  it("a timeout: the server's when connecting or listing; a call's or a read's own otherwise", () => {
    const timeout = { blame: 'server', reason: 'timeout', lost: false, unsent: false };
    expect(classifyFailure(undefined, 'connecting', 'call', true)).toEqual(timeout);
    expect(classifyFailure(undefined, 'asking', 'list', true)).toEqual(timeout);
    expect(classifyFailure(undefined, 'asking', 'call', true)).toEqual({
      blame: 'request',
      reason: 'timeout',
    });
    expect(classifyFailure(undefined, 'asking', 'read', true)).toEqual({
      blame: 'request',
      reason: 'timeout',
    });
  });

  it("the transport failing is the server's: refused (unsent), reset or closed (lost), HTTP 401 and 403, 5xx on a list", () => {
    expect(classifyFailure(fetchFailed('ECONNREFUSED'), 'asking', 'call', false)).toEqual(server(true, true));
    expect(classifyFailure(fetchFailed('ECONNRESET'), 'asking', 'call', false)).toEqual(server(true, false));
    const closed = new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed');
    expect(classifyFailure(closed, 'asking', 'call', false)).toEqual(server(true, false));
    const notConnected = new SdkError(SdkErrorCode.NotConnected, 'Not connected');
    expect(classifyFailure(notConnected, 'asking', 'call', false)).toEqual(server(true, true));
    expect(classifyFailure(new Error('Not connected'), 'asking', 'call', false)).toEqual(server(true, true));
    for (const status of [401, 403])
      expect(classifyFailure(http(status), 'asking', 'call', false)).toEqual(server(false, false));
    for (const status of [500, 502, 503, 504]) {
      expect(classifyFailure(http(status), 'asking', 'list', false)).toEqual(server(false, false));
      expect(classifyFailure(http(status), 'connecting', 'call', false)).toEqual(server(false, false));
    }
    // A session the server forgot: refused unread, so sent again on a new connection.
    expect(classifyFailure(http(404), 'asking', 'call', false)).toEqual(server(true, true));
  });

  it("an HTTP 4xx refusing one request, a 5xx on a call, read or prompt get (a proxy's 504), or an answer the SDK could not read, is that request's", () => {
    for (const status of [500, 502, 504])
      for (const kind of ['call', 'read'] as const)
        expect(classifyFailure(http(status), 'asking', kind, false)).toEqual({
          blame: 'request',
          reason: 'unavailable',
        });
    for (const status of [400, 413, 429])
      expect(classifyFailure(http(status), 'asking', 'call', false)).toEqual({
        blame: 'request',
        reason: 'unavailable',
      });
    const invalid = new SdkError(SdkErrorCode.InvalidResult, 'Invalid result for tools/call');
    expect(classifyFailure(invalid, 'asking', 'call', false)).toEqual({
      blame: 'request',
      reason: 'unavailable',
    });
    // Any failure to connect is the server's.
    expect(classifyFailure(invalid, 'connecting', 'call', false)).toEqual(server(false, false));
    expect(classifyFailure(http(400), 'connecting', 'list', false)).toEqual(server(false, false));
  });
});
