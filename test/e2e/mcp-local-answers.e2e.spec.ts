import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

const SECRET = 'local-secret-ABCDEFGH12345';
const SERVER = join(__dirname, '../support/mcp-stdio-counter.mjs');

/** a local server's calls are never sent twice; its credential never leaves. */
describe('MCP: what a local server answers', () => {
  let upstream: OpenAIUpstream;
  let gw: TestGateway;
  const countFile = join(mkdtempSync(join(tmpdir(), 'mcp-counter-')), 'calls');
  const lines = () => readFileSync(countFile, 'utf8').split('\n').filter(Boolean);

  beforeAll(async () => {
    writeFileSync(countFile, '');
    upstream = await new OpenAIUpstream().start();
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      config: {
        mcp: {
          servers: {
            counter: {
              command: process.execPath,
              args: [SERVER],
              env: { COUNT_FILE: countFile, COUNTER_SECRET: SECRET },
              timeoutMs: 8000,
            },
          },
        },
        teams: { t: { mcp: { servers: ['counter'], tools: ['*'] }, logging: { content: 'full' } } },
      },
    });
  });
  afterAll(async () => {
    await gw.close();
    await upstream.stop();
  });

  async function client(): Promise<ClientV1> {
    const created = await gw.admin('POST', '/admin/v1/teams/t/tokens', {});
    const c = new ClientV1({ name: 'counter-client', version: '1' });
    await c.connect(
      new TransportV1(new URL(`${gw.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${created.body.token}` } },
      }),
    );
    return c;
  }

  it('a call the server died in is not sent again; one it was killed in neither', async () => {
    const c = await client();
    await c.callTool({ name: 'counter__ok' }); // connection up and reused from here
    await c.callTool({ name: 'counter__die' }).catch(() => undefined);
    expect(lines().filter((l) => l.startsWith('die'))).toHaveLength(1);
    await c.callTool({ name: 'counter__ok' });
    const slow = c.callTool({ name: 'counter__slow' }).then(
      (r) => JSON.stringify(r),
      (e: Error) => e.message,
    );
    for (let i = 0; i < 100 && !lines().some((l) => l.startsWith('slow')); i++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const pid = Number(
      lines()
        .find((l) => l.startsWith('slow'))!
        .split(' ')[1],
    );
    process.kill(pid, 'SIGKILL');
    await slow;
    expect(lines().filter((l) => l.startsWith('slow'))).toHaveLength(1);
    await c.close();
  });

  it("the server's credential does not leave in keys, prompt messages, resource contents", async () => {
    const c = await client();
    const seen = [
      JSON.stringify(await c.callTool({ name: 'counter__leak' })),
      JSON.stringify(await c.getPrompt({ name: 'counter__p' })),
      JSON.stringify(await c.readResource({ uri: 'counter://secret' })),
    ];
    const log = await gw.admin('GET', '/admin/v1/requests?team=t&limit=100');
    const logged = JSON.stringify(log.body);
    await c.close();
    expect(seen.filter((s) => s.includes(SECRET))).toEqual([]);
    expect(logged).not.toContain(SECRET);
  });
});
