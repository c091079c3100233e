import { OpenAIUpstream } from '../support/openai-upstream';
import { freePort } from '../support/free-port';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

/**
 * docs/api.md: a team's `mcp` in the admin API is an object (never null or an array, which once was a 500 and a
 * silent loss of access); it "is replaced whole ... (`tools` defaults to `["*"]`), `{"mcp":
 * {"servers": []}}` takes all MCP access away". A body without `tools` must get that default, not a 500.
 */
describe("admin API: a team's mcp", () => {
  jest.setTimeout(60_000);
  let upstream: OpenAIUpstream;
  let gw: TestGateway;

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      config: {
        mcp: { servers: { remote: { url: `http://127.0.0.1:${await freePort()}/mcp` } } },
        teams: { lab: { mcp: { servers: ['remote'], tools: ['remote__echo'] } } },
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await upstream?.stop();
  });

  it('PATCH {"mcp": {"servers": []}} takes MCP access away (the documented call)', async () => {
    const response = await gw.admin('PATCH', '/admin/v1/teams/lab', { mcp: { servers: [] } });
    expect(response.status).toBe(200);
    expect(response.body.mcp).toEqual({ servers: [], tools: ['*'] });
  });

  it('PATCH {"mcp": {"servers": ["remote"]}} gives every tool of the server', async () => {
    const response = await gw.admin('PATCH', '/admin/v1/teams/lab', { mcp: { servers: ['remote'] } });
    expect(response.status).toBe(200);
    expect(response.body.mcp).toEqual({ servers: ['remote'], tools: ['*'] });
  });

  it('tools null is the default too, and a server named twice is kept once', async () => {
    const response = await gw.admin('PATCH', '/admin/v1/teams/lab', {
      mcp: { servers: ['remote', 'remote'], tools: null },
    });
    expect(response.status).toBe(200);
    expect(response.body.mcp).toEqual({ servers: ['remote'], tools: ['*'] });
  });

  it('an mcp without servers is refused as such', async () => {
    const response = await gw.admin('PATCH', '/admin/v1/teams/lab', { mcp: {} });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ type: 'invalid_request_error', param: 'mcp.servers' });
    expect(response.body.error.message).toMatch(/is required: the MCP permissions are replaced whole/);
  });

  it('POST a team with mcp servers and no tools', async () => {
    const response = await gw.admin('POST', '/admin/v1/teams', { id: 'fresh', mcp: { servers: ['remote'] } });
    expect(response.status).toBe(201);
    expect(response.body.mcp).toEqual({ servers: ['remote'], tools: ['*'] });
  });

  it.each([
    ['PATCH', '/admin/v1/teams/lab', { mcp: null }],
    ['POST', '/admin/v1/teams', { id: 'fresh', mcp: null }],
    ['PATCH', '/admin/v1/teams/lab', { mcp: [] }],
  ])('%s %s %j is a 400 on param mcp, and the team keeps its access', async (method, path, body) => {
    const before = await gw.admin('GET', '/admin/v1/teams/lab');
    const response = await gw.admin(method as 'PATCH' | 'POST', path, body);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ type: 'invalid_request_error' });
    expect(String(response.body.error.param)).toMatch(/^mcp/);
    const team = await gw.admin('GET', '/admin/v1/teams/lab');
    expect(team.body.mcp).toEqual(before.body.mcp);
  });
});
