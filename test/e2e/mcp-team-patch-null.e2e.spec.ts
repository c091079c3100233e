import { OpenAIUpstream } from '../support/openai-upstream';
import { freePort } from '../support/free-port';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

/**
 * Review finding (fails today): `mcp` in a team's PATCH or POST must be an object (docs/api.md). `null` is a 500
 * (TypeError in TeamStore's mergedFields, reading `servers` of null) instead of the API's 400; an array is taken
 * for `{"servers": []}` and silently removes the team's MCP access.
 */
describe('admin API: a team mcp that is not an object', () => {
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

  it.each([
    ['PATCH', '/admin/v1/teams/lab', { mcp: null }],
    ['POST', '/admin/v1/teams', { id: 'fresh', mcp: null }],
    ['PATCH', '/admin/v1/teams/lab', { mcp: [] }],
  ])('%s %s %j is a 400 on param mcp, and the team keeps its access', async (method, path, body) => {
    const response = await gw.admin(method as 'PATCH' | 'POST', path, body);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ type: 'invalid_request_error' });
    expect(String(response.body.error.param)).toMatch(/^mcp/);
    const team = await gw.admin('GET', '/admin/v1/teams/lab');
    expect(team.body.mcp).toEqual({ servers: ['remote'], tools: ['remote__echo'] });
  });
});
