import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { runCli, writeConfig } from '../support/gateway-process';
import { OpenAIUpstream } from '../support/openai-upstream';
import {
  ADMIN_KEY,
  deletePrefix,
  startTestGateway,
  type TestGateway,
  REDIS_URL,
} from '../support/test-gateway';

/** The operator CLI (dist/cli/main.js, `npx switchyard`) changes exactly what the admin API changes. */
describe('switchyard CLI', () => {
  const prefix = `sy-test:${randomBytes(6).toString('hex')}:`;
  const config = writeConfig(
    `redis: { url: "${REDIS_URL}", keyPrefix: "${prefix}" }\nadmin: { apiKey: "\${SWITCHYARD_ADMIN_KEY}" }\n`,
  );
  let upstream: OpenAIUpstream;
  let gw: TestGateway;

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    gw = await startTestGateway({ upstreamUrl: upstream.url, prefix });
  });
  afterAll(async () => {
    await deletePrefix(gw.redis, prefix);
    await gw.close();
    await upstream.stop();
  });

  // Each step starts a CLI process that boots Nest and connects to Redis (1-2 s on a quiet 2-core machine, several
  // seconds on a loaded one), and the two long tests run a dozen of them one after another: 30 s did not hold.
  jest.setTimeout(120_000);

  const cli = async (...args: string[]) => {
    const result = await runCli(config, args);
    if (result.code !== 0)
      throw new Error(`switchyard ${args.join(' ')} exited ${result.code}: ${result.output}`);
    return JSON.parse(result.stdout);
  };

  it('creates a team and a token the gateway accepts; lists, rotates, revokes, reads usage and the audit trail', async () => {
    const team = await cli(
      'teams',
      'create',
      'research',
      '--models',
      'echo,slow',
      '--rpm',
      '100',
      '--meta',
      'owner=ana',
    );
    expect(team).toMatchObject({
      id: 'research',
      models: ['echo', 'slow'],
      limits: { requestsPerMinute: 100 },
      metadata: { owner: 'ana' },
    });
    const token = await cli(
      'tokens',
      'create',
      '--team',
      'research',
      '--name',
      'laptop',
      '--expires-in',
      '3600',
    );
    expect(token).toMatchObject({
      team: 'research',
      name: 'laptop',
      status: 'active',
      token: expect.stringMatching(/^sy-[0-9a-f]{16}-/),
    });

    const completion = await gw
      .openai(token.token)
      .chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'hi there' }] });
    expect(completion.choices[0].message.content).toBe('echo: hi there');
    expect((await gw.admin('GET', '/admin/v1/teams/research')).body.limits).toEqual({
      requestsPerMinute: 100,
    });

    const listed = await cli('tokens', 'list', '--team', 'research');
    expect(listed).toEqual([expect.objectContaining({ id: token.id, name: 'laptop' })]);
    expect(JSON.stringify(listed)).not.toContain(token.token);

    const rotated = await cli('tokens', 'rotate', token.id);
    expect(rotated.id).toBe(token.id);
    await expect(
      gw
        .openai(token.token)
        .chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({ status: 401 });
    await cli('tokens', 'revoke', token.id);
    await expect(
      gw
        .openai(rotated.token)
        .chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({ status: 401 });

    const usage = await cli('usage', '--team', 'research', '--group-by', 'model');
    expect(usage.total).toMatchObject({ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 });
    const audit = await cli('audit', '--target', 'team/research');
    expect(audit.map((e: any) => e.action)).toEqual([
      'token.revoke',
      'token.rotate',
      'token.create',
      'team.create',
    ]);
    expect(audit[0].actor).toMatch(/^cli:/);

    // The revoked token does not block a delete; a live one does, unless forced.
    await cli('tokens', 'create', '--team', 'research', '--name', 'desktop');
    const refused = await runCli(config, ['teams', 'delete', 'research']);
    expect(refused.code).toBe(1);
    expect(refused.output).toMatch(/still has 1 active token/);
    expect(await cli('teams', 'delete', 'research', '--force')).toMatchObject({
      deleted: true,
      tokensDeleted: 2,
    });
    const bad = await runCli(config, ['teams', 'create', 'x', '--rpm', 'lots']);
    expect(bad.code).toBe(1);
    expect(bad.output).toMatch(/not a positive integer/);
  });

  it('teams update changes only what its flags name: --tpm keeps the other limits, "none" removes one, --meta and --unset-meta change one label', async () => {
    await cli(
      'teams',
      'create',
      'tuned',
      '--models',
      'echo',
      '--rpm',
      '100',
      '--tpd',
      '50000',
      '--budget-per-day',
      '5',
      '--meta',
      'owner=ana',
      '--meta',
      'cost-centre=42',
    );
    const tpm = await cli('teams', 'update', 'tuned', '--tpm', '5000');
    expect(tpm.limits).toEqual({
      requestsPerMinute: 100,
      tokensPerMinute: 5000,
      tokensPerDay: 50000,
      budgetPerDay: 5,
    });
    expect(tpm.metadata).toEqual({ owner: 'ana', 'cost-centre': '42' });
    expect((await gw.admin('GET', '/admin/v1/teams/tuned')).body.limits).toEqual(tpm.limits);

    const removed = await cli(
      'teams',
      'update',
      'tuned',
      '--rpm',
      'none',
      '--budget-per-day',
      'none',
      '--meta',
      'owner=bo',
      '--unset-meta',
      'cost-centre',
    );
    expect(removed.limits).toEqual({ tokensPerMinute: 5000, tokensPerDay: 50000 });
    expect(removed.metadata).toEqual({ owner: 'bo' });
    expect((await cli('teams', 'update', 'tuned', '--models', 'echo,slow')).limits).toEqual({
      tokensPerMinute: 5000,
      tokensPerDay: 50000,
    });

    const both = await runCli(config, [
      'teams',
      'update',
      'tuned',
      '--meta',
      'owner=cy',
      '--unset-meta',
      'owner',
    ]);
    expect(both.code).toBe(1);
    expect(both.output).toMatch(/--meta and --unset-meta both name owner/);
    expect((await runCli(config, ['teams', 'create', 'x', '--tpm', 'none'])).output).toMatch(
      /"none" is not a positive integer/,
    );
    const audit = await cli('audit', '--target', 'team/tuned');
    expect(
      audit.find((e: any) => e.action === 'team.update' && e.details.metadata?.['cost-centre'] === null)
        .details,
    ).toEqual({
      limits: { requestsPerMinute: null, budgetPerDay: null },
      metadata: { owner: 'bo', 'cost-centre': null },
    });
  });

  it("sets a team's ceiling: create takes its models and limits, update patches it (lowering clamps), --remove-ceiling drops it", async () => {
    const created = await cli(
      'teams',
      'create',
      'capped',
      '--ceiling-models',
      'echo,slow*',
      '--ceiling-limit',
      'rpm=600',
      '--ceiling-limit',
      'budget-per-day=5',
      '--tpd',
      '1000',
    );
    expect(created).toMatchObject({
      models: ['echo', 'slow*'],
      limits: { requestsPerMinute: 600, tokensPerDay: 1000, budgetPerDay: 5 },
      ceiling: { models: ['echo', 'slow*'], limits: { requestsPerMinute: 600, budgetPerDay: 5 } },
    });
    const lowered = await cli(
      'teams',
      'update',
      'capped',
      '--ceiling-limit',
      'rpm=100',
      '--ceiling-limit',
      'budgetPerDay=none',
    );
    expect(lowered.ceiling).toEqual({ models: ['echo', 'slow*'], limits: { requestsPerMinute: 100 } });
    expect(lowered.limits).toEqual({ requestsPerMinute: 100, tokensPerDay: 1000, budgetPerDay: 5 });
    expect((await gw.admin('GET', '/admin/v1/teams/capped')).body.ceiling).toEqual(lowered.ceiling);
    const beyond = await runCli(config, ['teams', 'update', 'capped', '--rpm', '101']);
    expect(beyond.code).toBe(1);
    expect(beyond.output).toMatch(
      /Team "capped"'s ceiling does not allow requestsPerMinute 101 \(at most 100\)/,
    );
    expect((await cli('teams', 'update', 'capped', '--ceiling-models', 'none')).ceiling).toEqual({
      limits: { requestsPerMinute: 100 },
    });
    expect((await cli('teams', 'update', 'capped', '--remove-ceiling')).ceiling).toBeNull();
    const bad = await runCli(config, ['teams', 'create', 'x', '--ceiling-limit', 'speed=9']);
    expect(bad.code).toBe(1);
    expect(bad.output).toMatch(/"speed=9" is not <limit>=<n> with a limit among concurrency, rpm/);
  });

  it('lists deployments from the config, and with --url their health from a running replica', async () => {
    const routed = writeConfig(
      `redis: { url: "${REDIS_URL}", keyPrefix: "${prefix}" }\nadmin: { apiKey: x }\nbackends:\n  a: { type: openai, baseUrl: "http://127.0.0.1:9/v1" }\n  b: { type: openai, baseUrl: "http://127.0.0.1:9/v1" }\n` +
        `models:\n  m: { deployments: [{ backend: a, upstreamModel: x, weight: 3 }, { backend: b, upstreamModel: y }], fallbacks: [n] }\n  n: { backend: b, upstreamModel: z }\n`,
    );
    const fromConfig = await runCli(routed, ['deployments']);
    expect(fromConfig.code).toBe(0);
    expect(JSON.parse(fromConfig.stdout)[0]).toMatchObject({
      model: 'm',
      routing: 'weighted',
      fallbacks: ['n'],
      deployments: [
        { backend: 'a', upstreamModel: 'x', weight: 3 },
        { backend: 'b', upstreamModel: 'y' },
      ],
    });
    const live = await runCli(config, ['deployments', '--url', gw.url], { SWITCHYARD_ADMIN_KEY: ADMIN_KEY });
    expect(live.code).toBe(0);
    expect(JSON.parse(live.stdout)).toContainEqual(
      expect.objectContaining({
        model: 'echo',
        deployment: 'standin/echo',
        circuit: expect.objectContaining({ state: 'closed' }),
      }),
    );
    const noKey = await runCli(config, ['deployments', '--url', gw.url]);
    expect(noKey.code).toBe(1);
    expect(noKey.output).toMatch(/not signed in to .*or set SWITCHYARD_ADMIN_KEY/);
  });

  it('prints its version (the package version) and exits 0', async () => {
    const result = await runCli(config, ['--version']);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(
      (JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8')) as { version: string })
        .version,
    );
  });
});
