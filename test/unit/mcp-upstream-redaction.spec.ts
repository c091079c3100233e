import { McpServerConfig } from '../../src/config/config.schema';
import { Redactor } from '../../src/request-log/redaction/redactor';
import { MAX_ERROR_CHARS, UpstreamRedaction } from '../../src/mcp/upstream-redaction';

function redactionOf(server: Partial<McpServerConfig>): UpstreamRedaction {
  return new UpstreamRedaction(Object.assign(new McpServerConfig(), server), new Redactor());
}

describe("an MCP server's credentials in what it says", () => {
  const remote = redactionOf({ url: 'http://x/mcp', headers: { Authorization: 'Bearer tok/en+1234 5' } });

  it('replaces a header value whole, its token alone, and its JSON-escaped and URL-encoded forms', () => {
    expect(remote.message('sent "Bearer tok/en+1234 5"')).toBe('sent "[mcp_credential]"');
    expect(remote.message('token tok/en+1234 only')).toBe('token [mcp_credential] only');
    expect(remote.message('as a query ?t=tok%2Fen%2B1234')).toBe('as a query ?t=[mcp_credential]');
    expect(remote.answer({ content: [{ text: 'x tok/en+1234' }] })).toEqual({
      content: [{ text: 'x [mcp_credential]' }],
    });
  });

  it("the url's query values and userinfo, any case, and base64 (standard, URL-safe, padded or not, or followed by more)", () => {
    const server = redactionOf({
      url: 'http://user1:p%40ssword9@x/mcp?api_key=querysecret123&v=2',
      headers: { Authorization: 'Bearer ghp_Token?>>1234' },
    });
    expect(server.message('GET /mcp?api_key=querysecret123&v=2')).toBe(
      'GET /mcp?api_key=[mcp_credential]&v=2',
    );
    expect(server.message('password p@ssword9, as written p%40ssword9')).toBe(
      'password [mcp_credential], as written [mcp_credential]',
    );
    expect(server.message('AUTHORIZATION: BEARER GHP_TOKEN?>>1234')).toBe('AUTHORIZATION: [mcp_credential]');
    const token = 'ghp_Token?>>1234';
    const standard = Buffer.from(token).toString('base64');
    const urlSafe = Buffer.from(token).toString('base64url');
    expect(standard).not.toBe(urlSafe);
    expect(standard).toMatch(/=$/);
    const followed = Buffer.from(`${token}:and more`).toString('base64');
    const said = server.message(`std ${standard} url ${urlSafe} followed ${followed}`);
    expect(said).not.toContain(standard.replace(/=+$/, ''));
    expect(said).not.toContain(urlSafe);
    expect(said).not.toContain(followed.slice(0, 16));
    expect(said).toMatch(/^std \[mcp_credential\]=* url \[mcp_credential\] followed \[mcp_credential\]/);
    expect(server.answer({ url: 'http://x/mcp?api_key=QUERYSECRET123' })).toEqual({
      url: 'http://x/mcp?api_key=[mcp_credential]',
    });
  });

  it("a local server's env values; short ones (no credential) are left alone", () => {
    const local = redactionOf({ command: 'node', env: { TOKEN: 'local-secret', DEBUG: '1' } });
    expect(local.kept('env TOKEN=local-secret DEBUG=1')).toBe('env TOKEN=[mcp_credential] DEBUG=1');
  });

  it('keeps what it keeps bounded and redacted by the request log policy too; answers without one are the same object', () => {
    const kept = remote.kept(`mail ops@example.com ${'x'.repeat(5000)}`);
    expect(kept.length).toBe(MAX_ERROR_CHARS);
    expect(kept).toContain('[email]');
    const answer = { content: [{ text: 'fine' }] };
    expect(remote.answer(answer)).toBe(answer);
  });

  it('replaces a credential used as an object key (structuredContent, _meta, a schema); keys that become the same both stay', () => {
    const secret = 'ghp_SuperSecretToken1234567890abcdef';
    const server = redactionOf({ url: 'http://x/mcp', headers: { Authorization: `Bearer ${secret}` } });
    const answer = server.answer({
      content: [],
      structuredContent: { [secret]: 'seen', [`Bearer ${secret}`]: 'also', kept: 1 },
      _meta: { nested: [{ [secret.toUpperCase()]: { inner: secret } }] },
      inputSchema: { type: 'object', properties: { [secret]: { type: 'string' } } },
    });
    expect(JSON.stringify(answer)).not.toMatch(new RegExp(secret, 'i'));
    expect(answer).toEqual({
      content: [],
      structuredContent: { '[mcp_credential]': 'seen', '[mcp_credential]#2': 'also', kept: 1 },
      _meta: { nested: [{ '[mcp_credential]': { inner: '[mcp_credential]' } }] },
      inputSchema: { type: 'object', properties: { '[mcp_credential]': { type: 'string' } } },
    });
  });

  it('leaves alone what is no credential: scheme words, values and parts shorter than 8 characters', () => {
    const server = redactionOf({
      url: 'http://x/mcp',
      headers: {
        Authorization: 'Bearer token-abcdefgh',
        'X-Api': 'Digest  Basic',
        'X-Level': 'warning',
        Accept: 'json',
      },
      env: { REGION: 'eu-west', MODE: 'Token negotiate' },
    });
    expect(
      server.message('Bearer scheme, Basic or Digest or Token or Negotiate; a warning in eu-west, as json'),
    ).toBe('Bearer scheme, Basic or Digest or Token or Negotiate; a warning in eu-west, as json');
    expect(server.message('sent Bearer token-abcdefgh and token-abcdefgh')).toBe(
      'sent [mcp_credential] and [mcp_credential]',
    );
  });

  it('finds a credential base64-encoded at any byte offset of a longer text (Basic user:token), standard or URL-safe', () => {
    const token = 'ghp_Tok?>>en~~1234567';
    const server = redactionOf({ url: 'http://x/mcp', env: { TOKEN: token } });
    for (const before of ['', 'a', 'ab', 'abc', 'user:', 'admin:'])
      for (const encoding of ['base64', 'base64url'] as const) {
        const encoded = Buffer.from(`${before}${token}:more after`).toString(encoding);
        const said = server.message(`Authorization: Basic ${encoded}`);
        expect(said).toContain('[mcp_credential]');
        // The characters that encode the token's bytes alone (its whole 3-byte groups) are gone.
        const from = (Math.ceil(before.length / 3) * 3 * 4) / 3;
        const to = (Math.floor((before.length + token.length) / 3) * 3 * 4) / 3;
        const own = encoded.slice(from, to);
        expect(own.length).toBeGreaterThanOrEqual(16);
        for (let at = 0; at + 8 <= own.length; at++) expect(said).not.toContain(own.slice(at, at + 8));
      }
    // A short fragment of noise that happens to be a piece of an encoding is left alone.
    expect(server.message('ids: abc def 12')).toBe('ids: abc def 12');
  });
});
