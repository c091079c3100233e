import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { BACKENDS, type Backend } from '../../src/providers/provider-adapter';
import type { LocalModelClient } from '../../src/providers/local/local-model.client';
import { allowedCpus, parseCpuList } from '../../src/providers/local/cpu-placement';
import { eventually } from '../support/eventually';
import {
  ensureLocalModel,
  ensureThinkingModel,
  localBackend,
  referenceTokens,
  THINKING_MODEL,
} from '../support/local-model';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { waitForUsageRecord, waitForUsageRecords, waitForUsageSummary } from '../support/usage';

/** The real default model (SmolLM2-135M-Instruct GGUF) through the gateway, in its worker process. */
describe('local model backend (real model)', () => {
  // A failure's patience, not a bound: on a loaded 2-core machine (load average 10-15) a token takes about a second
  // (llama.cpp's two threads wait on each other), and the longest tests here took 120-140 s of the 180 s they had.
  jest.setTimeout(600_000);
  let upstream: OpenAIUpstream;
  let gw: TestGateway;
  let token: string;
  let client: ReturnType<TestGateway['openai']>;
  const ask = (content: string, extra: object = {}) => ({
    model: 'smollm2',
    messages: [{ role: 'user' as const, content }],
    temperature: 0,
    ...extra,
  });

  beforeAll(async () => {
    ensureLocalModel();
    upstream = await new OpenAIUpstream().start();
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      config: {
        backends: {
          local: localBackend({ parallel: 2, queueSize: 2, threads: 2, defaultMaxTokens: 96 }),
        },
        models: { smollm2: { backend: 'local', upstreamModel: 'SmolLM2-135M-Instruct', thinking: 'native' } },
      },
    });
    ({ token } = await gw.teamToken('local'));
    client = gw.openai(token);
    // The model loaded (seconds on a loaded machine): the tests' polls on generation then wait for tokens alone.
    await eventually(
      () => expect(gw.logs.some((line) => /local model ready/.test(String(line.msg)))).toBe(true),
      120_000,
      200,
    );
  });
  afterAll(async () => {
    await gw?.close();
    await upstream?.stop();
  });

  const localClient = () =>
    (gw.gateway.app.get(BACKENDS) as Map<string, Backend>).get('local')!.client as LocalModelClient;
  /** The most text the worker has sent back so far for any request in flight (the client's pending replies). */
  const generatedChars = () =>
    Math.max(
      0,
      ...[...(localClient() as any).pending.values()].map(
        (p: { reply?: { text: string } }) => p.reply?.text.length ?? 0,
      ),
    );

  /** switchyard_upstream_errors_total of the local backend, all labels summed. */
  const localUpstreamErrors = async () =>
    (await (await fetch(`${gw.url}/metrics`)).text())
      .split('\n')
      .filter((l) => l.startsWith('switchyard_upstream_errors_total{') && l.includes('backend="local"'))
      .reduce((n, l) => n + Number(l.split(' ').pop()), 0);

  it('answers non-streaming, with usage counted by the model tokenizer on the rendered prompt', async () => {
    const messages = [{ role: 'user' as const, content: 'What is the capital of France?' }];
    const completion = await client.chat.completions.create({
      model: 'smollm2',
      messages,
      temperature: 0,
      max_tokens: 40,
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0].message.content).toMatch(/Paris/);
    expect(completion.choices[0].message.refusal).toBeNull(); // a required member of OpenAI's message
    expect(completion.choices[0].finish_reason).toBe('stop');

    // The reference: the same GGUF's chat template and tokenizer, driven directly.
    const history = [
      { type: 'user', text: messages[0].content },
      { type: 'model', response: [] },
    ];
    const reference = await referenceTokens(history, completion.choices[0].message.content!);
    const rendered = reference.prompt;
    expect(completion.usage).toEqual({
      prompt_tokens: rendered,
      completion_tokens: expect.any(Number),
      total_tokens: rendered + completion.usage!.completion_tokens,
    });
    // What was generated: the answer's tokens (the end-of-turn token that stopped it is not content).
    expect(completion.usage!.completion_tokens).toBe(reference.text);
    // A system message reaches the template too (rendered prompt grows by its tokens).
    const withSystem = await client.chat.completions.create({
      model: 'smollm2',
      messages: [{ role: 'system', content: 'Answer briefly.' }, ...messages],
      temperature: 0,
      max_tokens: 5,
    });
    expect(withSystem.usage!.prompt_tokens).toBeGreaterThan(rendered);
  });

  it('streams token by token through the SDK, with the usage chunk', async () => {
    const stream = await client.chat.completions.create({
      ...ask('Name three colors.', { max_tokens: 30 }),
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: any[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
    expect(chunks.filter((c) => c.choices[0]?.delta?.content).length).toBeGreaterThan(3);
    expect(text.length).toBeGreaterThan(5);
    expect(chunks.at(-1).usage.completion_tokens).toBeGreaterThan(3);
  });

  it('max_tokens is honoured and ends with finish_reason "length"; stop sequences are honoured; thinking is a 400 for this model', async () => {
    const completion = await client.chat.completions.create(
      ask('Write a long story about a dragon.', { max_tokens: 5 }),
    );
    expect(completion.choices[0].finish_reason).toBe('length');
    expect(completion.usage!.completion_tokens).toBe(5);
    // stop sequences end the answer before them (temperature 0: the answer is "The capital of France is Paris.").
    const stopped = await client.chat.completions.create(
      ask('What is the capital of France?', { max_tokens: 40, stop: ['Paris'] }),
    );
    expect(stopped.choices[0].message.content).not.toContain('Paris');
    expect(stopped.choices[0].message.content).toContain('France');
    expect(stopped.choices[0].finish_reason).toBe('stop');
    // `thinking: native` follows the template, and SmolLM2's has no thought section. The client's mistake is no
    // upstream error in the metrics (counted from before it: the crash test's 503 is one, and it may have run first).
    const errorsBefore = await localUpstreamErrors();
    const thinking = await gw.asTeam(token, 'POST', '/v1/chat/completions', {
      ...ask('x'),
      thinking: { type: 'enabled', budget_tokens: 100 },
    });
    expect(thinking.status).toBe(400);
    expect(thinking.body.error).toMatchObject({ type: 'invalid_request_error', param: 'thinking' });
    expect(thinking.body.error.message).toBe(
      "The model `smollm2` does not support extended reasoning ('thinking').",
    );
    expect(await localUpstreamErrors()).toBe(errorsBefore);
    // So it is not listed as a reasoning model.
    const listed = (await gw.asTeam(token, 'GET', '/v1/models')).body.data.find(
      (m: any) => m.id === 'smollm2',
    );
    expect(listed.reasoning).toBe(false);
  });

  it.each([
    ['n', { n: 2 }],
    ['functions', { functions: [{ name: 'f', parameters: { type: 'object' } }] }],
    ['response_format', { response_format: { type: 'json_object' } }],
    ['logprobs', { logprobs: true }],
  ])('refuses %s with a 400 naming the field instead of ignoring it', async (field, extra) => {
    const refused = await gw.asTeam(token, 'POST', '/v1/chat/completions', {
      ...ask('Say hi.', { max_tokens: 4 }),
      ...extra,
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({
      type: 'invalid_request_error',
      param: field,
      code: 'unsupported_parameter',
    });
    expect(refused.body.error.message).toContain('`smollm2`');
  });

  it('passes the off values of those fields (n: 1, response_format text) and an empty tools list', async () => {
    const ok = await gw.asTeam(token, 'POST', '/v1/chat/completions', {
      ...ask('Say hi.', { max_tokens: 4 }),
      n: 1,
      tools: [],
      response_format: { type: 'text' },
    });
    expect(ok.status).toBe(200);
  });

  it.each(['Say hi', 'Hello', 'Tell me a joke'])(
    '"%s" with no max_tokens and no sampling settings ends, streamed and not, within the default cap',
    async (prompt) => {
      const messages = [{ role: 'user' as const, content: prompt }];
      const plain = await client.chat.completions.create({ model: 'smollm2', messages });
      const cap = 96; // local.defaultMaxTokens in this test's config
      expect(plain.usage!.completion_tokens).toBeLessThanOrEqual(cap);
      if (plain.choices[0].finish_reason === 'length') expect(plain.usage!.completion_tokens).toBe(cap);
      const stream = await client.chat.completions.create({
        model: 'smollm2',
        messages,
        stream: true,
        stream_options: { include_usage: true },
      });
      let usage: any;
      let finish: string | null | undefined;
      for await (const chunk of stream) {
        finish ??= chunk.choices[0]?.finish_reason;
        usage = chunk.usage ?? usage;
      }
      expect(['stop', 'length']).toContain(finish);
      expect(usage.completion_tokens).toBeLessThanOrEqual(cap);
    },
  );

  it('without max_tokens a long answer is cut at the default cap with finish_reason "length"', async () => {
    const story = await client.chat.completions.create({
      model: 'smollm2',
      messages: [{ role: 'user', content: 'Write a very long story about a dragon, with many chapters.' }],
      temperature: 0,
    });
    expect(story.choices[0].finish_reason).toBe('length');
    expect(story.usage!.completion_tokens).toBe(96);
  });

  it('never generates past the context: max_tokens is capped at what the prompt leaves; a prompt over the context is a 400', async () => {
    const long = 'The quick brown fox jumps over the lazy dog. '.repeat(90); // ~900 of the 1024 context tokens
    const capped = await client.chat.completions.create({
      model: 'smollm2',
      messages: [{ role: 'user', content: long }],
      max_tokens: 500,
      temperature: 0,
    });
    expect(capped.usage!.prompt_tokens + capped.usage!.completion_tokens).toBeLessThanOrEqual(1024);
    expect(capped.usage!.completion_tokens).toBeLessThan(500);
    const tooLong = await gw.asTeam(token, 'POST', '/v1/chat/completions', {
      ...ask(long.repeat(2), { max_tokens: 10 }),
    });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error).toMatchObject({ code: 'context_length_exceeded', param: 'messages' });
  });

  it('an abandoned non-streaming request is accounted with exactly what the worker generated', async () => {
    const { token: leaver } = await gw.teamToken('local-leavers');
    const controller = new AbortController();
    const pending = gw
      .openai(leaver)
      .chat.completions.create(
        ask('Write a very long story about a dragon, with many chapters.', { max_tokens: 400 }),
        { signal: controller.signal },
      )
      .catch((e: unknown) => e);
    // Abort once the worker has generated some of the answer.
    await eventually(() => expect(generatedChars()).toBeGreaterThan(20), 60_000, 10);
    controller.abort();
    await pending;
    // The worker's report follows the token it was evaluating, seconds on a loaded machine: a failure's patience.
    const record = await waitForUsageRecord(gw, 'local-leavers', { timeoutMs: 60_000 });
    expect(record).toMatchObject({ outcome: 'aborted', estimated: false });
    expect(record.prompt_tokens).toBeGreaterThan(10);
    expect(record.completion_tokens).toBeGreaterThan(0);
    expect(record.completion_tokens).toBeLessThan(400);
  });

  it('a request the worker finished before the abort reached it is accounted with the answer the worker sent', async () => {
    const { token: late } = await gw.teamToken('local-late-leavers');
    const controller = new AbortController();
    const worker = (localClient() as any).worker as ChildProcess;
    const send = worker.send;
    const swallowed: unknown[] = [];
    // The client leaves as soon as its request reaches the worker, and the abort is held back, as when the worker
    // sends its last token while the abort is on its way: the worker's answer is all the gateway will hear.
    worker.send = ((message: any, ...rest: any[]) => {
      if (message.type === 'abort') {
        swallowed.push(message);
        return true;
      }
      if (message.type === 'generate') setImmediate(() => controller.abort());
      return (send as any).call(worker, message, ...rest);
    }) as typeof worker.send;
    try {
      const left = await gw
        .openai(late)
        .chat.completions.create(
          ask('Write a very long story about a dragon, with many chapters.', { max_tokens: 16 }),
          { signal: controller.signal },
        )
        .catch((e: unknown) => e);
      expect(left).toBeInstanceOf(Error);
      // An answer dropped instead of counted shows as an estimate, written when the client stops waiting for the
      // worker (30 s): the poll's bound is a failure's patience, it returns with the record.
      const record = await waitForUsageRecord(gw, 'local-late-leavers', { timeoutMs: 60_000 });
      expect(swallowed).toHaveLength(1);
      expect(record).toMatchObject({ outcome: 'aborted', estimated: false, completion_tokens: 16 });
      expect(record.prompt_tokens).toBeGreaterThan(10);
    } finally {
      worker.send = send;
    }
  });

  it('a full queue answers 429 with Retry-After; a client abort stops its generation in the worker; 4 concurrent streams all complete', async () => {
    // The four that fill the queue come from a team of their own, so their records are exactly theirs.
    const filler = gw.openai((await gw.teamToken('local-fillers')).token);
    const controllers = Array.from({ length: 4 }, () => new AbortController());
    const busy = await Promise.all(
      controllers.map((c) =>
        filler.chat.completions.create(
          { ...ask('Count from one to five hundred.', { max_tokens: 400 }), stream: true },
          { signal: c.signal },
        ),
      ),
    );
    const full = await gw.asTeam(token, 'POST', '/v1/chat/completions', ask('x'));
    expect(full.status).toBe(429);
    expect(full.headers.get('retry-after')).toBe('1');
    for (const c of controllers) c.abort();
    for (const s of busy)
      await (async () => {
        for await (const _ of s) void _;
      })().catch(() => undefined);
    // Each was stopped in the worker, not left to run its 400 tokens (holding a sequence): the worker reported what
    // each had generated when it stopped (the two queued ones: nothing), and the records carry those counts.
    // Waited on the records rather than timed: on a loaded 2-core machine even the 12-token answers below took
    // most of the 30 s this test once allowed for everything.
    const stopped = await waitForUsageRecords(gw, 'local-fillers', 4, { timeoutMs: 60_000 });
    for (const record of stopped) {
      expect(record).toMatchObject({ outcome: 'aborted', estimated: false });
      expect(record.completion_tokens).toBeLessThan(400);
    }
    expect((localClient() as any).abandoned.size).toBe(0);
    const results = await Promise.all(
      Array.from({ length: 4 }, async (_, i) => {
        const s = await client.chat.completions.create({
          ...ask(`Say the number ${i}.`, { max_tokens: 12 }),
          stream: true,
          stream_options: { include_usage: true },
        });
        const chunks: any[] = [];
        for await (const chunk of s) chunks.push(chunk);
        return chunks;
      }),
    );
    for (const chunks of results) {
      expect(chunks.some((c) => c.choices[0]?.finish_reason)).toBe(true);
      expect(chunks.at(-1).usage.completion_tokens).toBeGreaterThan(0);
    }
  });

  it('generation starts while the admission is in flight; a request the limits refuse is cancelled in the worker and accounted as rejected', async () => {
    await gw.admin('POST', '/admin/v1/teams', { id: 'local-quota', limits: { tokensPerDay: 200 } });
    const { token: quota } = await gw.teamToken('local-quota');
    const worker = (localClient() as any).worker as ChildProcess;
    const posted: Array<{ type: string; id?: number }> = [];
    const send = worker.send;
    worker.send = ((message: any, ...rest: any[]) => {
      posted.push(message);
      return (send as any).call(worker, message, ...rest);
    }) as typeof worker.send;
    try {
      const admitted = await gw.asTeam(
        quota,
        'POST',
        '/v1/chat/completions',
        ask('Say hello.', { max_tokens: 4 }),
      );
      expect(admitted.status).toBe(200);
      // Reserves its prompt + 400 completion tokens against a 200-token day: refused, whatever it would really use.
      const refused = await gw.asTeam(quota, 'POST', '/v1/chat/completions', {
        ...ask('Count to a thousand.', { max_tokens: 400 }),
        stream: true,
      });
      expect(refused.status).toBe(429);
      expect(refused.body.error).toMatchObject({ type: 'rate_limit_exceeded', code: 'quota_exceeded' });
      // Both went to the worker before their admission answered; the refused one was told to stop at once.
      const generate = posted.filter((m) => m.type === 'generate');
      expect(generate).toHaveLength(2);
      expect(posted.at(-1)).toEqual({ type: 'abort', id: generate[1].id });
      expect((localClient() as any).pending.size).toBe(0);
    } finally {
      worker.send = send;
    }
    const { total: usage } = await waitForUsageSummary(gw, 'team=local-quota', 2);
    expect(usage).toMatchObject({ requests: 2, requests_ok: 1, requests_rejected: 1 });
    expect(usage.completion_tokens).toBeLessThanOrEqual(4); // nothing of the refused request was counted
  });

  it('chat ids are random, unique across restarts and replicas (a per-process counter repeated chatcmpl-local-1 on every boot)', async () => {
    const replica = await startTestGateway({
      upstreamUrl: upstream.url,
      config: {
        backends: {
          local: localBackend({ queueSize: 1, contextSize: 512, defaultMaxTokens: 4 }),
        },
        models: { smollm2: { backend: 'local', upstreamModel: 'SmolLM2-135M-Instruct' } },
      },
    });
    try {
      const other = replica.openai((await replica.teamToken('local-replica')).token);
      // Another boot (a replica, or this gateway restarted) against this one: a counter started both at chatcmpl-local-1.
      const [mine, theirs] = await Promise.all([
        client.chat.completions.create(ask('Hi.', { max_tokens: 2 })),
        other.chat.completions.create(ask('Hi.', { max_tokens: 2 })),
      ]);
      const streamed = await other.chat.completions.create({
        ...ask('Hi.', { max_tokens: 2 }),
        stream: true,
      });
      const streamIds = new Set<string>();
      for await (const chunk of streamed) streamIds.add(chunk.id);
      const ids = [mine.id, theirs.id, ...streamIds];
      for (const id of ids) expect(id).toMatch(/^chatcmpl-[A-Za-z0-9]{29}$/);
      expect(streamIds.size).toBe(1); // one id for every chunk of a stream
      expect(new Set(ids).size).toBe(3);
    } finally {
      await replica.close();
    }
  });

  it('a crashed worker fails its requests with 503 and is restarted', async () => {
    const pending = gw.asTeam(
      token,
      'POST',
      '/v1/chat/completions',
      ask('Write a long poem.', { max_tokens: 300 }),
    );
    // Killed mid-generation: once the worker has written some of the answer.
    await eventually(() => expect(generatedChars()).toBeGreaterThan(0), 60_000, 10);
    const pid = localClient().workerPid!;
    const readyLines = () => gw.logs.filter((line) => /local model ready/.test(String(line.msg))).length;
    const readyBefore = readyLines();
    process.kill(pid, 'SIGKILL');
    const failed = await pending;
    expect(failed.status).toBe(503);
    expect(failed.body.error).toMatchObject({ code: 'upstream_unavailable' });
    expect(failed.body.error.message).toMatch(/crashed/);
    // Restarted: a new worker reports ready (polled on the log, a read); then one request is answered.
    await eventually(() => expect(readyLines()).toBe(readyBefore + 1), 120_000, 200);
    expect(localClient().workerPid).toEqual(expect.any(Number));
    expect(localClient().workerPid).not.toBe(pid);
    const again = await client.chat.completions.create(ask('Say hello.', { max_tokens: 8 }));
    expect(again.choices[0].message.content!.length).toBeGreaterThan(0);
  });

  it('usage accounting and metrics agree for the local model', async () => {
    // A team of its own and two requests of its own (one streamed), so the figures are exactly theirs.
    const { token: own } = await gw.teamToken('local-metrics');
    const mine = gw.openai(own);
    const plain = await mine.chat.completions.create(ask('Say hello.', { max_tokens: 8 }));
    const stream = await mine.chat.completions.create({
      ...ask('Say hi.', { max_tokens: 8 }),
      stream: true,
      stream_options: { include_usage: true },
    });
    let streamed: { prompt_tokens: number; completion_tokens: number } | undefined;
    for await (const chunk of stream) if (chunk.usage) streamed = chunk.usage;
    // What the client was told, summed: the usage API and the metrics must say the same.
    const told = {
      prompt: plain.usage!.prompt_tokens + streamed!.prompt_tokens,
      completion: plain.usage!.completion_tokens + streamed!.completion_tokens,
    };
    const { total: usage } = await waitForUsageSummary(gw, 'team=local-metrics&model=smollm2', 2);
    expect({ prompt: usage.prompt_tokens, completion: usage.completion_tokens }).toEqual(told);
    // The metrics move with the same records; polled, as /metrics and the usage store are written apart.
    await eventually(async () => {
      const text = await (await fetch(`${gw.url}/metrics`)).text();
      const sum = (type: string) =>
        text
          .split('\n')
          .filter(
            (l) =>
              l.startsWith('switchyard_tokens_total{') &&
              l.includes('team="local-metrics"') &&
              l.includes('model="smollm2"') &&
              l.includes(`type="${type}"`),
          )
          .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
      expect({ prompt: sum('prompt'), completion: sum('completion') }).toEqual(told);
    });
  });

  it('a model that cannot load answers 403 model_unavailable with what to do, and is not restarted in a loop', async () => {
    const broken = await startTestGateway({
      upstreamUrl: upstream.url,
      config: {
        backends: { local: { type: 'local', local: { modelPath: '/nonexistent/model.gguf', threads: 1 } } },
        models: { smollm2: { backend: 'local', upstreamModel: 'x' } },
      },
    });
    try {
      const { token: t } = await broken.teamToken('broken');
      const res = await broken.asTeam(t, 'POST', '/v1/chat/completions', ask('hi'));
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'model_unavailable' });
      expect(res.body.error.message).toMatch(/npm run model:fetch/);
      // A window in which nothing may happen: a restart loop would log within it (the first restart is due after
      // 0.5 s, the second after 1 s more), so this sleep is the observation itself, not a wait for a condition.
      await new Promise((r) => setTimeout(r, 1500));
      expect(broken.logs.filter((l) => String(l.msg).includes('restarting'))).toHaveLength(0);
    } finally {
      await broken.close();
    }
  });
});

/**
 * A GGUF whose chat template has a thought section (see ensureThinkingModel): thinking is run with the
 * budget enforced by node-llama-cpp, relayed as reasoning_content and counted as reasoning_tokens.
 */
describe('local model backend with a thought section in its template (real model)', () => {
  jest.setTimeout(180_000);
  let upstream: OpenAIUpstream;
  let gw: TestGateway;
  let client: ReturnType<TestGateway['openai']>;
  const think = (budget: number, extra: object = {}) => ({
    model: 'thinker',
    messages: [{ role: 'user' as const, content: 'Why is the sky blue?' }],
    temperature: 0,
    max_tokens: 120,
    thinking: { type: 'enabled', budget_tokens: budget },
    ...extra,
  });

  beforeAll(async () => {
    ensureThinkingModel();
    upstream = await new OpenAIUpstream().start();
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      config: {
        // Default threads and pinning: every CPU but the first, the worker pinned to them.
        backends: {
          local: {
            type: 'local',
            local: { modelPath: THINKING_MODEL, parallel: 1, queueSize: 4, contextSize: 1024 },
          },
        },
        models: { thinker: { backend: 'local', upstreamModel: 'SmolLM2-think', thinking: 'native' } },
      },
    });
    client = gw.openai((await gw.teamToken('thinkers')).token);
  });
  afterAll(async () => {
    await gw?.close();
    await upstream?.stop();
  });

  it('by default the worker is pinned to every CPU but the first, which is left to the gateway', async () => {
    const allowed = allowedCpus();
    const worker = (gw.gateway.app.get(BACKENDS) as Map<string, Backend>).get('local')!
      .client as LocalModelClient;
    await eventually(
      async () =>
        expect(gw.logs.some((line) => /local model ready: .*inference thread/.test(String(line.msg)))).toBe(
          true,
        ),
      60_000,
      200,
    );
    const status = readFileSync(`/proc/${worker.workerPid}/status`, 'utf8');
    const workerCpus = parseCpuList(/^Cpus_allowed_list:\s*(.+)$/m.exec(status)![1]);
    if (allowed.length < 2)
      expect(workerCpus).toEqual(allowed); // one CPU: nothing to leave to the gateway
    else expect(workerCpus).toEqual(allowed.slice(1));
    // Every thread of the worker, llama.cpp's included (started after the pinning), runs there.
    for (const task of readdirSync(`/proc/${worker.workerPid}/task`)) {
      const taskStatus = readFileSync(`/proc/${worker.workerPid}/task/${task}/status`, 'utf8');
      expect(parseCpuList(/^Cpus_allowed_list:\s*(.+)$/m.exec(taskStatus)![1])).toEqual(workerCpus);
    }
  });

  it('thinks within the budget, then answers; the budget is what limits the thought', async () => {
    const small = (await client.chat.completions.create(think(12) as any)) as any;
    const reasoning = small.usage.completion_tokens_details.reasoning_tokens;
    expect(small.choices[0].message.reasoning_content.length).toBeGreaterThan(0);
    expect(reasoning).toBeGreaterThan(0);
    expect(reasoning).toBeLessThanOrEqual(12);
    expect(small.usage.completion_tokens).toBeGreaterThan(reasoning); // the answer came after the thought
    expect(small.choices[0].message.content.length).toBeGreaterThan(0);
    expect(small.usage.total_tokens).toBe(small.usage.prompt_tokens + small.usage.completion_tokens);
    // Same prompt, larger budget: the model thinks longer, so the budget (not the model) stopped the first thought.
    const large = (await client.chat.completions.create(think(48) as any)) as any;
    expect(large.usage.completion_tokens_details.reasoning_tokens).toBeGreaterThan(reasoning);
    expect(large.usage.completion_tokens_details.reasoning_tokens).toBeLessThanOrEqual(48);
  });

  it('streams the thought as reasoning_content deltas before the answer, with reasoning_tokens in the usage chunk', async () => {
    const stream = await client.chat.completions.create({
      ...think(16),
      stream: true,
      stream_options: { include_usage: true },
    } as any);
    const chunks: any[] = [];
    for await (const chunk of stream as any) chunks.push(chunk);
    const firstReasoning = chunks.findIndex((c) => c.choices[0]?.delta?.reasoning_content);
    const firstContent = chunks.findIndex((c) => c.choices[0]?.delta?.content);
    expect(firstReasoning).toBeGreaterThan(-1);
    expect(firstContent).toBeGreaterThan(firstReasoning);
    const usage = chunks.at(-1).usage;
    expect(usage.completion_tokens_details.reasoning_tokens).toBeGreaterThan(0);
    expect(usage.completion_tokens_details.reasoning_tokens).toBeLessThanOrEqual(16);
  });

  it('answers without a thought when the request does not ask for thinking', async () => {
    const plain = (await client.chat.completions.create({
      model: 'thinker',
      messages: [{ role: 'user', content: 'Why is the sky blue?' }],
      temperature: 0,
      max_tokens: 30,
    })) as any;
    expect(plain.choices[0].message.reasoning_content).toBeUndefined();
    expect(plain.usage.completion_tokens_details).toBeUndefined();
    expect(plain.choices[0].message.content.length).toBeGreaterThan(0);
  });

  it('records the reasoning tokens in usage accounting', async () => {
    // A team and a request of its own (it read the four requests of the tests above, so it passed only after them).
    const own = gw.openai((await gw.teamToken('thinkers-recorded')).token);
    const answer = (await own.chat.completions.create(think(12) as any)) as any;
    const told = answer.usage.completion_tokens_details.reasoning_tokens;
    expect(told).toBeGreaterThan(0);
    const record = await waitForUsageRecord(gw, 'thinkers-recorded');
    expect(record).toMatchObject({
      reasoning_tokens: told,
      completion_tokens: answer.usage.completion_tokens,
      estimated: false,
    });
  });
});
