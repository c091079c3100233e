import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { agentCli } from '../support/agent-clis';
import { AZURE_API_KEY, AzureUpstream, ENTRA } from '../support/azure-upstream';
import { eventually } from '../support/eventually';
import { waitForUsageRecord } from '../support/usage';
import { run, stopChild, waitForListening, writeConfig } from '../support/gateway-process';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

/**
 * The `azure` family through the whole gateway, against a stand-in Azure OpenAI resource that checks `api-key`,
 * `api-version` and Entra ID tokens itself and is its own Entra authority (https, a certificate made by the test).
 * Clients: the openai SDK (chat streamed and not, embeddings, Responses), @anthropic-ai/sdk (Messages, translated)
 * and the Codex CLI on Azure's v1 Responses.
 */
describe('Azure OpenAI backends', () => {
  let azure: AzureUpstream;
  let gw: TestGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;
  let token: string;

  beforeAll(async () => {
    azure = await new AzureUpstream().start();
    azure.trustInThisProcess();
    const entra = { ...ENTRA, authorityHost: azure.authorityHost };
    gw = await startTestGateway({
      upstreamUrl: 'http://127.0.0.1:9/v1',
      config: {
        backends: {
          'az-key': { type: 'azure', baseUrl: azure.url, apiKey: AZURE_API_KEY },
          'az-entra': { type: 'azure', baseUrl: azure.url, entra },
          'az-dated': { type: 'azure', baseUrl: azure.url, apiKey: AZURE_API_KEY, apiVersion: '2024-10-21' },
          'az-short-tokens': { type: 'azure', baseUrl: azure.url, entra },
          // Entra ID on a backend (and so a token cache) of its own, for the test that counts the tokens issued:
          // on `az-entra` the tests that run before it would already have fetched the one it expects.
          'az-entra-once': { type: 'azure', baseUrl: azure.url, entra },
          'az-wrong-secret': {
            type: 'azure',
            baseUrl: azure.url,
            entra: { ...entra, clientSecret: 'not-the-secret-4f9a2b7c' },
          },
        },
        models: {
          'az-chat': { backend: 'az-key', upstreamModel: 'echo' },
          'az-entra': { backend: 'az-entra', upstreamModel: 'echo' },
          'az-entra-once': { backend: 'az-entra-once', upstreamModel: 'echo' },
          'az-dated': { backend: 'az-dated', upstreamModel: 'echo' },
          'az-async': { backend: 'az-key', upstreamModel: 'echo-async' },
          'az-filtered-prompt': { backend: 'az-entra', upstreamModel: 'filtered-prompt' },
          'az-filtered-answer': { backend: 'az-key', upstreamModel: 'filtered-answer' },
          'az-filtered-answer-dated': { backend: 'az-dated', upstreamModel: 'filtered-answer' },
          'az-embed': { backend: 'az-entra', upstreamModel: 'embed', kind: 'embedding' },
          'az-embed-dated': { backend: 'az-dated', upstreamModel: 'embed', kind: 'embedding' },
          'az-throttled': { backend: 'az-key', upstreamModel: 'throttled' },
          'az-failover': {
            deployments: [
              { backend: 'az-key', upstreamModel: 'throttled', priority: 0 },
              { backend: 'az-entra', upstreamModel: 'echo', priority: 1 },
            ],
          },
          'az-leaky-key': { backend: 'az-key', upstreamModel: 'leaky' },
          'az-leaky-entra': { backend: 'az-entra', upstreamModel: 'leaky' },
          'az-short': { backend: 'az-short-tokens', upstreamModel: 'echo' },
          'az-wrong-secret': { backend: 'az-wrong-secret', upstreamModel: 'echo' },
          'az-reasoner': { backend: 'az-key', upstreamModel: 'echo', thinking: 'reasoning_effort' },
        },
        routing: { retries: { backoffMs: 10, maxRetryAfterMs: 100 } },
        server: { metricsToken: 'azure-metrics-token' },
      },
    });
    token = (await gw.teamToken('azure-team')).token;
    openai = gw.openai(token, { maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: token, baseURL: gw.url, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw?.close();
    await azure?.stop();
  });

  const callsTo = (path: string) => azure.requests.filter((r) => r.path === path);

  it('v1 with a key: the deployment is the model, the key goes as api-key, the filter annotations are gone', async () => {
    const before = azure.requests.length;
    const reply = await openai.chat.completions.create({
      model: 'az-chat',
      messages: [{ role: 'user', content: 'hello there' }],
    });
    expect(reply.choices[0].message.content).toBe('echo: hello there');
    expect(reply.model).toBe('az-chat');
    expect(reply).not.toHaveProperty('prompt_filter_results');
    expect(reply.choices[0]).not.toHaveProperty('content_filter_results');
    expect(reply.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 });
    const [call] = azure.requests.slice(before);
    expect(call.path).toBe('/openai/v1/chat/completions');
    expect(call.body.model).toBe('echo');
    expect(call.headers['api-key']).toBe(AZURE_API_KEY);
    expect(call.headers.authorization).toBeUndefined();
  });

  it('Entra ID: one token for many calls, sent as a Bearer token, streamed chat without annotations', async () => {
    const before = azure.requests.length;
    const issuedBefore = azure.issued.length;
    for (let i = 0; i < 3; i++) {
      const stream = await openai.chat.completions.create({
        model: 'az-entra-once',
        messages: [{ role: 'user', content: `streamed ${i}` }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '';
      for await (const chunk of stream) {
        expect(chunk).not.toHaveProperty('prompt_filter_results');
        for (const choice of chunk.choices) expect(choice).not.toHaveProperty('content_filter_results');
        expect(chunk.id).not.toBe('');
        text += chunk.choices[0]?.delta.content ?? '';
      }
      expect(text).toBe(`echo: streamed ${i}`);
    }
    const calls = azure.requests.slice(before);
    expect(calls).toHaveLength(3);
    const issued = azure.issued.slice(issuedBefore);
    expect(issued).toHaveLength(1);
    for (const call of calls) {
      expect(call.headers.authorization).toBe(`Bearer ${issued[0].token}`);
      expect(call.headers['api-key']).toBeUndefined();
    }
    expect(azure.refused).toHaveLength(0);
  });

  it("a dated api-version: the deployment's path with ?api-version=", async () => {
    const before = azure.requests.length;
    const reply = await openai.chat.completions.create({
      model: 'az-dated',
      messages: [{ role: 'user', content: 'dated' }],
    });
    expect(reply.choices[0].message.content).toBe('echo: dated');
    expect(azure.requests[before].path).toBe(
      '/openai/deployments/echo/chat/completions?api-version=2024-10-21',
    );
  });

  it("the asynchronous filter's annotation-only events never reach the client", async () => {
    const response = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'az-async',
        messages: [{ role: 'user', content: 'a b c' }],
        stream: true,
      }),
    });
    const body = await response.text();
    expect(body).not.toMatch(/filter_(results|offsets)/);
    const chunks = body
      .split('\n\n')
      .filter((event) => event.startsWith('data: {'))
      .map((event) => JSON.parse(event.slice(6)) as { choices: Array<{ delta: { content?: string } }> });
    expect(chunks.every((chunk) => chunk.choices.every((choice) => choice.delta !== undefined))).toBe(true);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('echo: a b c');
  });

  it('embeddings on v1 and on a dated version', async () => {
    const v1 = await openai.embeddings.create({ model: 'az-embed', input: ['one two', 'three'] });
    expect(v1.data).toHaveLength(2);
    expect(v1.data[0].embedding).toHaveLength(8);
    expect(v1.usage.prompt_tokens).toBe(3);
    expect(callsTo('/openai/v1/embeddings').at(-1)!.body.model).toBe('embed');
    const dated = await openai.embeddings.create({ model: 'az-embed-dated', input: 'four' });
    expect(dated.data[0].embedding).toHaveLength(8);
    expect(callsTo('/openai/deployments/embed/embeddings?api-version=2024-10-21')).toHaveLength(1);
  });

  it("Responses go natively to v1's /responses, and are translated to chat on a dated version", async () => {
    const native = await openai.responses.create({ model: 'az-entra', input: 'native please', store: false });
    expect(native.output_text).toBe('echo: native please');
    expect(callsTo('/openai/v1/responses').at(-1)!.body).toMatchObject({
      model: 'echo',
      input: 'native please',
    });
    const stream = await openai.responses.create({ model: 'az-entra', input: 'streamed', stream: true });
    let text = '';
    for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta;
    expect(text).toBe('echo: streamed');
    const before = azure.requests.length;
    const translated = await openai.responses.create({ model: 'az-dated', input: 'translated' });
    expect(translated.output_text).toBe('echo: translated');
    expect(azure.requests[before].path).toBe(
      '/openai/deployments/echo/chat/completions?api-version=2024-10-21',
    );
  });

  it('Messages from the Anthropic SDK are translated, streamed and not', async () => {
    const message = await anthropic.messages.create({
      model: 'az-entra',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'from claude' }],
    });
    expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: 'echo: from claude' })]);
    expect(message.stop_reason).toBe('end_turn');
    const stream = anthropic.messages.stream({
      model: 'az-dated',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'streamed claude' }],
    });
    const final = await stream.finalMessage();
    expect(final.content[0]).toMatchObject({ type: 'text', text: 'echo: streamed claude' });
    expect(final.usage).toMatchObject({ input_tokens: 2, output_tokens: 3 });
  });

  it('limits, stop sequences and thinking reach Azure as OpenAI parameters it accepts', async () => {
    const cut = await openai.chat.completions.create({
      model: 'az-dated',
      max_completion_tokens: 2,
      messages: [{ role: 'user', content: 'one two three four' }],
    });
    expect(cut.choices[0]).toMatchObject({ finish_reason: 'length', message: { content: 'echo: one ' } });
    const stopped = await anthropic.messages.create({
      model: 'az-chat',
      max_tokens: 50,
      stop_sequences: ['three'],
      messages: [{ role: 'user', content: 'one two three four' }],
    });
    expect(stopped.content[0]).toMatchObject({ text: 'echo: one two ' });
    const before = azure.requests.length;
    const thought = await anthropic.messages.create({
      model: 'az-reasoner',
      max_tokens: 20_000,
      thinking: { type: 'enabled', budget_tokens: 10_000 },
      messages: [{ role: 'user', content: 'think' }],
    });
    expect(thought.content.at(-1)).toMatchObject({ type: 'text', text: 'echo: think' });
    // The request Azure got has no gateway field in it (its stand-in refuses unknown arguments, as Azure does).
    expect(azure.requests[before].body).toMatchObject({
      reasoning_effort: 'high',
      max_completion_tokens: 20_000,
    });
    expect(azure.requests[before].body).not.toHaveProperty('max_tokens');
    expect(azure.requests[before].body).not.toHaveProperty('thinking');
  });

  describe('content filter refusals reach each client in its own wire, never as a 502', () => {
    it('a refused prompt: the OpenAI client gets 400 content_filter, the Anthropic client its invalid_request_error', async () => {
      const chat = await openai.chat.completions
        .create({ model: 'az-filtered-prompt', messages: [{ role: 'user', content: 'bad' }] })
        .catch((error: unknown) => error);
      expect(chat).toBeInstanceOf(OpenAI.BadRequestError);
      expect(chat).toMatchObject({ status: 400, code: 'content_filter', param: 'prompt' });
      expect((chat as Error).message).toMatch(/content management policy/);
      const messages = await anthropic.messages
        .create({ model: 'az-filtered-prompt', max_tokens: 10, messages: [{ role: 'user', content: 'bad' }] })
        .catch((error: unknown) => error);
      expect(messages).toBeInstanceOf(Anthropic.BadRequestError);
      expect((messages as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
        type: 'error',
        error: { type: 'invalid_request_error', message: expect.stringMatching(/content management policy/) },
      });
      // Not retried elsewhere, not the deployment's fault: one call each.
      expect(azure.calls({ model: 'filtered-prompt' })).toBe(2);
    });

    it('a filtered answer: finish_reason content_filter, stop_reason refusal, an incomplete response', async () => {
      const chat = await openai.chat.completions.create({
        model: 'az-filtered-answer',
        messages: [{ role: 'user', content: 'x' }],
      });
      expect(chat.choices[0].finish_reason).toBe('content_filter');
      expect(chat.choices[0]).not.toHaveProperty('content_filter_results');
      const stream = await openai.chat.completions.create({
        model: 'az-filtered-answer',
        messages: [{ role: 'user', content: 'x' }],
        stream: true,
      });
      const finishes: Array<string | null> = [];
      for await (const chunk of stream) finishes.push(...chunk.choices.map((choice) => choice.finish_reason));
      expect(finishes.at(-1)).toBe('content_filter');
      const message = await anthropic.messages.create({
        model: 'az-filtered-answer',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'x' }],
      });
      expect(message.stop_reason).toBe('refusal');
      const streamed = await anthropic.messages
        .stream({ model: 'az-filtered-answer', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })
        .finalMessage();
      expect(streamed.stop_reason).toBe('refusal');
      // (Translated from chat: on v1, Responses go to Azure natively and come back as Azure wrote them.)
      const response = await openai.responses.create({ model: 'az-filtered-answer-dated', input: 'x' });
      expect(response.status).toBe('incomplete');
      expect(response.incomplete_details).toEqual({ reason: 'content_filter' });
    });
  });

  it("Azure's 429 is a 429 with its Retry-After, and retried on the next deployment like any other", async () => {
    const throttled = await gw.asTeam(token, 'POST', '/v1/chat/completions', {
      model: 'az-throttled',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(throttled.status).toBe(429);
    expect(throttled.body.error.code).toBe('rate_limit_exceeded');
    expect(throttled.headers.get('retry-after')).toBe('2');
    const response = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'az-failover', messages: [{ role: 'user', content: 'fail over' }] }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-switchyard-attempts')).toBe('2');
    expect(response.headers.get('x-switchyard-backend')).toBe('az-entra');
    expect(((await response.json()) as OpenAI.ChatCompletion).choices[0].message.content).toBe(
      'echo: fail over',
    );
  });

  it('credentials never reach a client or the logs: key, client secret, tokens', async () => {
    for (const model of ['az-leaky-key', 'az-leaky-entra']) {
      const { status, body } = await gw.asTeam(token, 'POST', '/v1/chat/completions', {
        model,
        messages: [{ role: 'user', content: 'x' }],
      });
      expect(status).toBe(400);
      expect(body.error.message).toMatch(/Request with credential .*redacted/);
    }
    const wrong = await gw.asTeam(token, 'POST', '/v1/chat/completions', {
      model: 'az-wrong-secret',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(wrong.status).toBe(502);
    expect(wrong.body.error.code).toBe('upstream_auth_failed');
    expect(wrong.body.error.message).toMatch(/could not sign in to Entra ID \(invalid_client\)/);
    expect(azure.refusedSignIns).toContain('invalid_client');
    await eventually(() =>
      expect(gw.rawLogs.join('\n')).toMatch(/Entra ID refused the backend's app registration.*AADSTS7000215/),
    );
    const everything = [gw.rawLogs.join('\n'), JSON.stringify(wrong.body)].join('\n');
    const metrics = await (
      await fetch(`${gw.url}/metrics`, { headers: { authorization: 'Bearer azure-metrics-token' } })
    ).text();
    for (const secret of [
      AZURE_API_KEY,
      ENTRA.clientSecret,
      'not-the-secret-4f9a2b7c',
      ...azure.issued.map((issued) => issued.token),
    ]) {
      expect(everything).not.toContain(secret);
      expect(metrics).not.toContain(secret);
    }
  });

  it('Entra tokens are refreshed before they expire: a new one is in use while the old one is still valid', async () => {
    azure.tokenLifetimeSeconds = 121; // inside the library's 2-minute refresh window from the first second
    const first = azure.issued.length;
    const ask = () =>
      openai.chat.completions.create({ model: 'az-short', messages: [{ role: 'user', content: 'fresh' }] });
    await ask();
    expect(azure.issued).toHaveLength(first + 1);
    const old = azure.issued[first];
    await eventually(async () => {
      await ask();
      expect(azure.issued.length).toBeGreaterThan(first + 1);
      expect(azure.last().headers.authorization).toBe(`Bearer ${azure.issued.at(-1)!.token}`);
    }, 15_000);
    expect(old.expiresAt).toBeGreaterThan(Date.now());
    expect(azure.refused).toHaveLength(0);
    azure.tokenLifetimeSeconds = 3599;
  });

  it('usage is recorded for an Azure call, tokens as Azure counted them', async () => {
    const own = (await gw.teamToken('azure-usage')).token;
    await gw.openai(own, { maxRetries: 0 }).chat.completions.create({
      model: 'az-chat',
      messages: [{ role: 'user', content: 'count these words' }],
    });
    const record = await waitForUsageRecord(gw, 'azure-usage');
    // The stand-in counts words: 3 in the prompt, "echo: count these words" is 4.
    expect(record).toMatchObject({
      model: 'az-chat',
      outcome: 'ok',
      prompt_tokens: 3,
      completion_tokens: 4,
      total_tokens: 7,
    });
  });
});

/** Codex (the real CLI, pinned) with the gateway as its Responses provider, natively to Azure's v1 Responses. */
describe('Codex to Azure OpenAI v1 Responses', () => {
  jest.setTimeout(180_000);
  const CODEX = agentCli('codex');
  let azure: AzureUpstream;
  let gw: TestGateway;
  let home: string;

  beforeAll(async () => {
    azure = await new AzureUpstream().start();
    azure.trustInThisProcess();
    gw = await startTestGateway({
      upstreamUrl: 'http://127.0.0.1:9/v1',
      config: {
        backends: {
          'az-entra': {
            type: 'azure',
            baseUrl: azure.url,
            entra: { ...ENTRA, authorityHost: azure.authorityHost },
          },
        },
        models: { 'az-codex': { backend: 'az-entra', upstreamModel: 'tool-caller' } },
      },
    });
    home = mkdtempSync(join(tmpdir(), 'codex-azure-'));
  });
  afterAll(async () => {
    await gw?.close();
    await azure?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it("runs the shell command the model calls, every turn on Azure's /openai/v1/responses", async () => {
    const { token } = await gw.teamToken('codex-azure');
    const note = join(home, 'note.txt');
    writeFileSync(note, 'the azure vault code is 4417\n');
    const codexHome = join(home, '.codex');
    mkdirSync(codexHome, { recursive: true });
    writeFileSync(
      join(codexHome, 'config.toml'),
      [
        'model = "az-codex"',
        'model_provider = "gateway"',
        '[model_providers.gateway]',
        'name = "Gateway"',
        `base_url = "${gw.url}/v1"`,
        'env_key = "GATEWAY_TOKEN"',
        'wire_api = "responses"',
        '',
      ].join('\n'),
    );
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [
          CODEX,
          'exec',
          '--skip-git-repo-check',
          '--dangerously-bypass-approvals-and-sandbox',
          `call exec_command with {"cmd":"cat ${note}"}`,
        ],
        {
          cwd: home,
          env: { PATH: process.env.PATH, HOME: home, CODEX_HOME: codexHome, GATEWAY_TOKEN: token },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
      child.on('close', (code) => {
        clearTimeout(timer);
        if (code === 0) resolve(stdout);
        else reject(new Error(`codex exit ${code}: ${stderr.slice(-2000)}`));
      });
    });
    expect(output).toContain('tool said:');
    expect(output).toContain('the azure vault code is 4417');
    const turns = azure.requests.filter((r) => r.path === '/openai/v1/responses');
    expect(turns.length).toBeGreaterThanOrEqual(2);
    expect(turns[0].body).toMatchObject({ model: 'tool-caller', stream: true });
    for (const turn of turns) expect(turn.headers.authorization).toMatch(/^Bearer eyJ/);
    expect(azure.requests.length).toBe(turns.length);
  });
});

/**
 * The operator's way to trust an Entra authority behind a private CA (docs/backends.md): the built gateway, as a
 * process, with NODE_EXTRA_CA_CERTS; without it the authority's certificate is refused (verification stays on).
 * Needs `npm run build`.
 */
describe('Entra ID from the built gateway, trusting the authority through NODE_EXTRA_CA_CERTS', () => {
  let azure: AzureUpstream;

  beforeAll(async () => {
    azure = await new AzureUpstream().start();
  });
  afterAll(async () => {
    await azure?.stop();
  });

  const config = () =>
    writeConfig(`
server: { port: 0, host: 127.0.0.1 }
redis: { url: "redis://127.0.0.1:6379", keyPrefix: "sy-azure-process-${randomBytes(4).toString('hex')}:" }
admin: { apiKey: adm }
backends:
  az:
    type: azure
    baseUrl: "${azure.url}"
    entra: { tenantId: ${ENTRA.tenantId}, clientId: ${ENTRA.clientId}, clientSecret: "\${AZURE_CLIENT_SECRET}", authorityHost: "${azure.authorityHost}" }
models:
  az-chat: { backend: az, upstreamModel: echo }
teams:
  process-team: { models: ["*"] }
`);

  async function ask(url: string): Promise<Response> {
    const token = (await (
      await fetch(`${url}/admin/v1/teams/process-team/tokens`, {
        method: 'POST',
        headers: { authorization: 'Bearer adm' },
      })
    ).json()) as { token: string };
    return fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'az-chat', messages: [{ role: 'user', content: 'from a process' }] }),
    });
  }

  it('signs in and answers with the CA trusted; refuses the authority without it, naming no secret', async () => {
    const trusted = run(config(), {
      AZURE_CLIENT_SECRET: ENTRA.clientSecret,
      NODE_EXTRA_CA_CERTS: azure.certificateFile,
    });
    try {
      const answer = await ask(await waitForListening(trusted.output));
      expect(answer.status).toBe(200);
      expect(((await answer.json()) as OpenAI.ChatCompletion).choices[0].message.content).toBe(
        'echo: from a process',
      );
      expect(azure.issued).toHaveLength(1);
      expect(azure.last().headers.authorization).toBe(`Bearer ${azure.issued[0].token}`);
    } finally {
      await stopChild(trusted.child);
    }
    const untrusted = run(config(), { AZURE_CLIENT_SECRET: ENTRA.clientSecret });
    try {
      const answer = await ask(await waitForListening(untrusted.output));
      expect(answer.status).toBe(502);
      expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('upstream_unreachable');
      expect(azure.issued).toHaveLength(1);
      await eventually(() => expect(untrusted.output()).toMatch(/could not get an Entra ID token/));
      expect(untrusted.output()).not.toContain(ENTRA.clientSecret);
    } finally {
      await stopChild(untrusted.child);
    }
  });
});
