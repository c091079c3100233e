import { spawn, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { Agent } from 'undici';
import type { RunningProcess } from '../support/gateway-process';
import { startStandinGatewayProcess, type StandinGatewayProcess } from '../support/standin-gateway-process';
import { eventually } from '../support/eventually';

/**
 * The bound every body within server.maxBodyBytes must keep (issue 32): no run of the event loop over 50 ms of the
 * gateway's own work (user-mode CPU).
 */
const MAX_BLOCK_MS = 50;
/**
 * The same run with the kernel's part (page faults backing fresh memory) counted in: a loose bound, for a copy or
 * an allocation that grew past reason. The kernel's part is the machine's: 2 us a fault in this CI's container and
 * up to ~12 us with both cores busy, so a round that touches 15-20 MB for the first time (~5,000 faults) was seen
 * at 30-64 ms of CPU with 3-23 ms of it the gateway's code.
 */
const MAX_ROUND_CPU_MS = 150;
/** The gateway's limits per body (src/common/http/json-shape.ts), stated here so a change is seen. */
const MAX_BODY_VALUES = 100_000;
const MAX_BODY_SCALARS = 400_000;
const MAX_BODY_KEYS = 10_000;
/** 20 MiB, the default server.maxBodyBytes: every attack body is just under it. */
const MAX_BODY_BYTES = 20 * 1024 * 1024;

interface ProbeReport {
  maxCpuMs: number;
  maxUserMs: number;
  maxWallMs: number;
  ticks: number;
  /** The round with the most CPU: how it split between the gateway's code and the kernel, and its page faults. */
  longest: { userMs: number; systemMs: number; minorFaults: number };
}

interface LiveReport {
  answers: number;
  medianMs: number;
  maxMs: number;
}

interface Phase {
  name: string;
  status: number;
  maxCpuMs: number;
  maxUserMs: number;
  minorFaults: number;
  maxWallMs: number;
  probeMs: number;
}

/** `count` copies of `item` joined by commas, between `head` and `tail`, as one buffer. */
function repeated(head: string, item: string, count: number, tail: string): Buffer {
  const items = Buffer.from(`${item},`.repeat(count - 1) + item);
  return Buffer.concat([Buffer.from(head), items, Buffer.from(tail)]);
}

/** As many copies of `item` as fit in `bytes` with the head and tail. */
function filling(head: string, item: string, tail: string, bytes = MAX_BODY_BYTES - 64 * 1024): Buffer {
  return repeated(head, item, Math.floor((bytes - head.length - tail.length) / (item.length + 1)), tail);
}

/** An object's members `"k0":0,"k1":0,...` (`count` distinct keys) between `head` and `tail`. */
function distinctKeys(head: string, count: number, tail: string): Buffer {
  return Buffer.from(`${head}${Array.from({ length: count }, (_, i) => `"k${i}":0`).join(',')}${tail}`);
}

/**
 * Many small items, the biggest bodies the gateway takes, and the attacks that used to stall it, on every route
 * that reads a body, against the built gateway in its own process: no run of the gateway's event loop may take
 * more than 50 ms.
 *
 * How the block is measured, and why it holds on a loaded machine: test/support/event-loop-probe.mjs runs inside the
 * gateway and reports the most CPU time its main thread spent between two ticks of a 1 ms timer (one round of the
 * event loop), and how much of it was user-mode: the gateway's own code. CPU time, not wall-clock: with other suites
 * on the same two cores the gateway is descheduled for tens of milliseconds at a time while doing nothing, which a
 * wall-clock measure (a health probe's latency, Node's monitorEventLoopDelay) would count as blocking. User-mode,
 * for the strict bound: the rest is the kernel backing memory a round touches for the first time, whose cost per
 * page is the machine's (a 15-20 MB copy took 3-23 ms of user CPU and 8-38 ms of the kernel's in the same round on
 * this CI's machine); the whole round's CPU has a loose bound of its own. Before the fix the attacks blocked for
 * seconds of CPU; after it the longest round is a few milliseconds to ~25 ms of user CPU, so 50 ms is a bound with
 * room on a busy machine, and a regression to per-item class-validator work (~8 us an item) or a whole-body parse
 * of 650,000 items (>100 ms) cannot pass. A live probe (GET /health/live every 20 ms) runs beside each phase and its slowest answer is
 * printed, for information only: it also waits for this test process (whose stand-in upstreams parse and answer
 * the same big bodies) and for the machine's scheduler; on a busy machine it was seen at 1.4 s while the gateway's
 * longest round was 12 ms of CPU. The concurrent rounds (bodies that end at the same moment) also run a liveness
 * prober in a process of its own (test/support/live-probe.mjs), whose median and slowest answers are held to loose
 * bounds: the test process's own work does not delay it, the machine's scheduler still does.
 */
describe('no body within server.maxBodyBytes blocks the event loop', () => {
  jest.setTimeout(600_000);
  let standin: StandinGatewayProcess;
  let gateway: RunningProcess;
  let url: string;
  let token: string;
  const dispatcher = new Agent({ connections: 4, bodyTimeout: 120_000, headersTimeout: 120_000 });
  const phases: Phase[] = [];
  let firstPhaseOfTest = 0;
  beforeEach(() => {
    firstPhaseOfTest = phases.length;
  });
  let liveProber: ChildProcess | undefined;
  let liveOutput = '';

  beforeAll(async () => {
    standin = await startStandinGatewayProcess('loop', {
      NODE_OPTIONS: `--import ${pathToFileURL(join(__dirname, '../support/event-loop-probe.mjs')).href}`,
    });
    ({ gateway, url, token } = standin);
    liveProber = spawn(
      process.execPath,
      [join(__dirname, '../support/live-probe.mjs'), `${url}/health/live`],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    liveProber.stdout!.on('data', (d) => (liveOutput += d));
    await eventually(() => expect(liveOutput).toContain('liveProbeReady'), 10_000);
    // Each route once with an ordinary body first: what is measured is the bodies, not first-call set-up.
    for (const [path, body] of warmUps()) await send(path, Buffer.from(JSON.stringify(body)));
  });

  afterAll(async () => {
    if (phases.length)
      console.log(
        `event-loop rounds per phase (user CPU ms of the round with the most; CPU ms and page faults of the round with the most CPU; wall ms and probe latency for information):\n${phases.map((p) => `  ${p.name.padEnd(58)} ${String(p.status).padEnd(4)} user ${p.maxUserMs.toFixed(1).padStart(6)}  cpu ${p.maxCpuMs.toFixed(1).padStart(6)} (${String(p.minorFaults).padStart(5)} faults)  wall ${p.maxWallMs.toFixed(1).padStart(7)}  probe ${p.probeMs.toFixed(1).padStart(7)}`).join('\n')}`,
      );
    liveProber?.kill('SIGKILL');
    await dispatcher.close();
    await standin?.stop();
  });

  function warmUps(): Array<[string, unknown]> {
    return [
      ['/v1/chat/completions', { model: 'echo', messages: [{ role: 'user', content: 'hi' }] }],
      [
        '/v1/messages',
        {
          model: 'echo',
          max_tokens: 16,
          messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
        },
      ],
      ['/v1/messages', { model: 'claude-echo', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }],
      ['/v1/messages/count_tokens', { model: 'echo', messages: [{ role: 'user', content: 'hi' }] }],
      ['/v1/responses', { model: 'echo', input: [{ role: 'user', content: 'hi' }] }],
      ['/v1/embeddings', { model: 'embed', input: [[1, 2, 3]] }],
      ['/admin/v1/teams', { id: 'warm-up', models: ['echo'] }],
    ];
  }

  async function send(
    path: string,
    body: Buffer,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; text: string }> {
    const authorization = path.startsWith('/admin/') ? `Bearer ${standin.adminKey}` : `Bearer ${token}`;
    const response = await fetch(`${url}${path}`, {
      method: path.startsWith('/admin/v1/teams/') && !path.endsWith('/tokens') ? 'PATCH' : 'POST',
      headers: { authorization, 'content-type': 'application/json', ...headers },
      body,
      dispatcher,
    });
    return { status: response.status, text: await response.text() };
  }

  /** The probe's report since the previous one (kill -USR2, then its line on stderr). */
  async function probeReport(): Promise<ProbeReport> {
    return (await nextReport(gateway.output, () => gateway.child.kill('SIGUSR2'), 'eventLoopProbe'))
      .eventLoopProbe as ProbeReport;
  }

  /**
   * Sends the requests so that their bodies end at the same moment: every request but its last byte first, each on
   * a connection of its own, then (once all of those bytes are written) every last byte in one go. The gateway then
   * sees the bodies complete in one read of the event loop, and their heavy steps are due at the same time: the
   * case where they could pile up into one turn. Resolves with each answer's status.
   */
  async function sendTogether(requests: Array<[string, Buffer]>): Promise<number[]> {
    const target = new URL(url);
    const sockets: Socket[] = [];
    const answers = requests.map(([path, body]) => {
      const head = Buffer.from(
        `POST ${path} HTTP/1.1\r\nhost: ${target.host}\r\nauthorization: Bearer ${token}\r\n` +
          `content-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n`,
      );
      const socket = connect(Number(target.port), target.hostname);
      sockets.push(socket);
      let received = '';
      socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
      const written = new Promise<void>((resolve, reject) => {
        socket.once('error', reject);
        socket.write(Buffer.concat([head, body.subarray(0, body.length - 1)]), () => resolve());
      });
      const status = new Promise<number>((resolve, reject) => {
        socket.once('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0)));
        socket.once('error', reject);
      });
      return { written, status, last: body.subarray(body.length - 1) };
    });
    await Promise.all(answers.map((a) => a.written));
    answers.forEach((a, i) => sockets[i].write(a.last));
    return Promise.all(answers.map((a) => a.status));
  }

  /** The live prober's answers since its previous report (test/support/live-probe.mjs). */
  async function liveReport(): Promise<LiveReport> {
    return (
      await nextReport(
        () => liveOutput,
        () => liveProber!.kill('SIGUSR2'),
        'liveProbe',
      )
    ).liveProbe as LiveReport;
  }

  /**
   * Asks a probe for its report (`ask`, a signal) and waits for the new line keyed `key` in its output: a whole
   * line (one that parses), one more than before, so an earlier report is never read again.
   */
  async function nextReport(
    output: () => string,
    ask: () => void,
    key: string,
  ): Promise<Record<string, unknown>> {
    const reports = () =>
      output()
        .split('\n')
        .filter((line) => line.includes(`"${key}"`));
    const seen = reports().length;
    ask();
    return eventually(
      () => {
        const lines = reports();
        expect(lines).toHaveLength(seen + 1);
        return JSON.parse(lines.at(-1)!) as Record<string, unknown>;
      },
      10_000,
      5,
    );
  }

  /** GET /health/live every 20 ms until stopped; resolves with the slowest answer's latency. */
  function liveProbe(): { stop: () => Promise<number> } {
    let running = true;
    let slowest = 0;
    const loop = (async () => {
      while (running) {
        const started = performance.now();
        // A gateway that died answers nothing: that shows in the phase's exit check, not here.
        await fetch(`${url}/health/live`).then(
          (response) => response.arrayBuffer(),
          () => undefined,
        );
        slowest = Math.max(slowest, performance.now() - started);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    return {
      stop: async () => {
        running = false;
        await loop;
        return slowest;
      },
    };
  }

  async function phase(
    name: string,
    path: string,
    body: Buffer,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; text: string }> {
    expect(body.length).toBeLessThan(MAX_BODY_BYTES);
    await probeReport(); // starts the phase's period
    const probe = liveProbe();
    const answer = await send(path, body, headers);
    // What the request set going after its answer (usage records, stored responses) belongs to it too: the phase's
    // measurement period runs on for 200 ms. A window of observation, not a wait for a condition (it ends the same
    // whether or not anything happens in it).
    await new Promise((r) => setTimeout(r, 200));
    const probeMs = await probe.stop();
    const report = await probeReport();
    phases.push({
      name,
      status: answer.status,
      maxCpuMs: report.maxCpuMs,
      maxUserMs: report.maxUserMs,
      minorFaults: report.longest.minorFaults,
      maxWallMs: report.maxWallMs,
      probeMs,
    });
    expect(report.ticks).toBeGreaterThan(0);
    return answer;
  }

  function expectOpenAIError(answer: { status: number; text: string }, status: number, code: string | null) {
    expect(answer.status).toBe(status);
    const body = JSON.parse(answer.text) as { error: Record<string, unknown> };
    expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
    expect(body.error.code).toBe(code);
  }

  function expectAnthropicError(answer: { status: number; text: string }, status: number, type: string) {
    expect(answer.status).toBe(status);
    const body = JSON.parse(answer.text) as { type: string; error: { type: string; message: string } };
    expect(body.type).toBe('error');
    expect(body.error.type).toBe(type);
  }

  const tooManyValues = new RegExp(
    `more than ${MAX_BODY_VALUES.toLocaleString('en-US')} JSON objects, arrays and strings`,
  );

  it("the many-items attack on every body-taking route is refused (413 naming the limit, in each API's shape) without blocking", async () => {
    const chat = await phase(
      'chat: 650k one-letter messages',
      '/v1/chat/completions',
      filling('{"model":"echo","messages":[', '{"role":"user","content":"a"}', ']}'),
    );
    expectOpenAIError(chat, 413, 'request_too_large');
    expect(chat.text).toMatch(tooManyValues);

    const blocks = await phase(
      'messages: content blocks',
      '/v1/messages',
      filling(
        '{"model":"echo","max_tokens":16,"messages":[{"role":"user","content":[',
        '{"type":"text","text":"a"}',
        ']}]}',
      ),
    );
    expectAnthropicError(blocks, 413, 'request_too_large');
    expect(blocks.text).toMatch(tooManyValues);
    const count = await phase(
      'count_tokens: messages',
      '/v1/messages/count_tokens',
      filling('{"model":"echo","messages":[', '{"role":"user","content":"a"}', ']}'),
    );
    expectAnthropicError(count, 413, 'request_too_large');

    const responses = await phase(
      'responses: input items',
      '/v1/responses',
      filling('{"model":"echo","input":[', '{"role":"user","content":"a"}', ']}'),
    );
    expectOpenAIError(responses, 413, 'request_too_large');
    const embeddings = await phase(
      'embeddings: one token array',
      '/v1/embeddings',
      filling('{"model":"embed","input":[', '1', ']}'),
    );
    expectOpenAIError(embeddings, 413, 'request_too_large');
    expect(embeddings.text).toMatch(`more than ${MAX_BODY_SCALARS.toLocaleString('en-US')} JSON numbers`);

    expectOpenAIError(
      await phase(
        'admin: create team, models',
        '/admin/v1/teams',
        filling('{"id":"big","models":[', '"m"', ']}'),
      ),
      413,
      'request_too_large',
    );
    const keys = await phase(
      'admin: update team, 1.5M distinct unknown keys',
      '/admin/v1/teams/loop',
      distinctKeys('{"limits":{', 1_500_000, '}}'),
    );
    expectOpenAIError(keys, 413, 'request_too_large');
    expect(keys.text).toMatch(`more than ${MAX_BODY_KEYS.toLocaleString('en-US')} distinct object keys`);
    expectOpenAIError(
      await phase(
        'admin: create token, models',
        '/admin/v1/teams/loop/tokens',
        filling('{"models":[', '"m"', ']}'),
      ),
      413,
      'request_too_large',
    );
    // Anonymous: the console's sign-in reads a body before it knows the caller.
    expectOpenAIError(
      await phase(
        'console sign-in (anonymous)',
        '/console/api/session',
        filling('{"adminKey":"x","name":"x","k":[', '0', ']}'),
      ),
      413,
      'request_too_large',
    );

    // Compressed (read by body-parser, then scanned a slice per turn): 18 MB in ~60 KB.
    const zipped = gzipSync(filling('{"model":"echo","messages":[', '{"role":"user","content":"a"}', ']}'));
    expectOpenAIError(
      await phase('chat, gzip: 650k messages', '/v1/chat/completions', zipped, {
        'content-encoding': 'gzip',
      }),
      413,
      'request_too_large',
    );
    // Nesting past 128 levels all the way through 18 MB: refused at level 129.
    expectOpenAIError(
      await phase(
        'chat: 9M nested arrays',
        '/v1/chat/completions',
        Buffer.concat([Buffer.from('{"model":"echo","messages":'), Buffer.from('['.repeat(9_000_000))]),
      ),
      400,
      'invalid_json',
    );
    expectBounded();
  });

  it('the biggest bodies the gateway accepts (just under the value limit, valid, answered by a backend) do not block either', async () => {
    const messages = Math.floor((MAX_BODY_VALUES - 3) / 3); // root, model, messages; three values a message
    expect(
      (
        await phase(
          `chat: ${messages} messages, answered`,
          '/v1/chat/completions',
          repeated('{"model":"echo","messages":[', '{"role":"user","content":"a"}', messages, ']}'),
        )
      ).status,
    ).toBe(200);
    const blocks = Math.floor((MAX_BODY_VALUES - 7) / 3); // root, model, messages, the message, its role and content
    const blockBody = (model: string, extra: string) =>
      repeated(
        `{"model":"${model}"${extra},"messages":[{"role":"user","content":[`,
        '{"type":"text","text":"a"}',
        blocks,
        ']}]}',
      );
    expect(
      (
        await phase(
          `messages, translated: ${blocks} blocks`,
          '/v1/messages',
          blockBody('echo', ',"max_tokens":16'),
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await phase(
          `messages, native (Anthropic): ${blocks} blocks`,
          '/v1/messages',
          blockBody('claude-echo', ',"max_tokens":16'),
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await phase(
          `count_tokens: ${blocks} blocks, estimated`,
          '/v1/messages/count_tokens',
          blockBody('echo', ''),
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await phase(
          `responses: ${messages} input items, stored`,
          '/v1/responses',
          repeated('{"model":"echo","input":[', '{"role":"user","content":"a"}', messages, ']}'),
        )
      ).status,
    ).toBe(200);
    // Tool calls then their outputs (nine values a pair): one assistant turn of many calls in chat.
    const pairs = Math.floor((MAX_BODY_VALUES - 3) / 9);
    const calls = `${'{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},'.repeat(pairs)}${'{"type":"function_call_output","call_id":"c","output":"x"},'.repeat(pairs)}`;
    expect(
      (
        await phase(
          `responses: ${pairs} function calls and outputs`,
          '/v1/responses',
          Buffer.from(`{"model":"echo","store":false,"input":[${calls.slice(0, -1)}]}`),
        )
      ).status,
    ).toBe(200);
    const uses = Math.floor((MAX_BODY_VALUES - 12) / 9);
    const toolTurns = `{"role":"assistant","content":[${'{"type":"tool_use","id":"t","name":"f","input":{}},'.repeat(uses).slice(0, -1)}]},{"role":"user","content":[${'{"type":"tool_result","tool_use_id":"t","content":"x"},'.repeat(uses).slice(0, -1)}]}`;
    expect(
      (
        await phase(
          `messages, translated: ${uses} tool uses and results`,
          '/v1/messages',
          Buffer.from(
            `{"model":"echo","max_tokens":16,"messages":[{"role":"user","content":"go"},${toolTurns}]}`,
          ),
        )
      ).status,
    ).toBe(200);
    // Token arrays: ~MAX_BODY_SCALARS numbers in 2048 inputs (OpenAI's limits: 2048 inputs, 300,000 tokens).
    const tokens = Array.from({ length: 146 }, (_, i) => i).join(',');
    expect(
      (
        await phase(
          'embeddings: 2048 token arrays of 146',
          '/v1/embeddings',
          repeated('{"model":"embed","input":[', `[${tokens}]`, 2048, ']}'),
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await phase(
          `admin: a team with ${MAX_BODY_VALUES - 3} models`,
          '/admin/v1/teams',
          repeated('{"id":"many-models","models":[', '"echo"', MAX_BODY_VALUES - 3, ']}'),
        )
      ).status,
    ).toBe(201);
    // Distinct keys (class-transformer was quadratic in them: 10,000 unknown admin keys took 0.2 s, 50,000 2 s).
    const keys = MAX_BODY_KEYS - 10;
    expect(
      (
        await phase(
          `chat: ${keys} distinct keys passed through`,
          '/v1/chat/completions',
          // To a vLLM-like backend: OpenAI itself refuses members it does not define (the stand-in does too).
          distinctKeys('{"model":"vllm-echo","messages":[{"role":"user","content":"a"}],', keys, '}'),
        )
      ).status,
    ).toBe(200);
    expectOpenAIError(
      await phase(
        `admin: update team, ${keys} distinct unknown keys`,
        '/admin/v1/teams/loop',
        distinctKeys('{"limits":{', keys, '}}'),
      ),
      400,
      null,
    );
    // Numbers up to their own limit, in a field the gateway passes through (to a vLLM-like backend, as above).
    expect(
      (
        await phase(
          `chat: ${MAX_BODY_SCALARS - 1} numbers passed through`,
          '/v1/chat/completions',
          repeated(
            '{"model":"vllm-echo","messages":[{"role":"user","content":"a"}],"x":[',
            '1',
            MAX_BODY_SCALARS - 1,
            ']}',
          ),
        )
      ).status,
    ).toBe(200);
    // A long single prompt (15 MB of text): the cost is in bytes, not values. (The stand-in echoes the last user
    // message, so the long text is the system message: what is measured is the request, not a 15 MB answer.)
    const prompt = `{"model":"echo","messages":[{"role":"system","content":"${'lorem ipsum dolor sit amet '.repeat(550_000)}"},{"role":"user","content":"hi"}]}`;
    expect(
      (await phase('chat: one 15 MB prompt, answered', '/v1/chat/completions', Buffer.from(prompt))).status,
    ).toBe(200);
    expectBounded();
  });

  it('four of the biggest bodies at once: their parses, validations and translations take turns one at a time', async () => {
    // Each heavy step of a big body waits for a turn of the event loop; four bodies waiting at once used to be
    // released in the same turn, and their steps ran back to back (4 x 10-20 ms). One queue lets one through a turn.
    const messages = Math.floor((MAX_BODY_VALUES - 3) / 3);
    const blocks = Math.floor((MAX_BODY_VALUES - 7) / 3);
    const chat = repeated('{"model":"echo","messages":[', '{"role":"user","content":"a"}', messages, ']}');
    const translated = repeated(
      '{"model":"echo","max_tokens":16,"messages":[{"role":"user","content":[',
      '{"type":"text","text":"a"}',
      blocks,
      ']}]}',
    );
    const responses = repeated(
      '{"model":"echo","store":false,"input":[',
      '{"role":"user","content":"a"}',
      messages,
      ']}',
    );
    // The stand-in echoes the last user message, so the long text is the system message (as in the test above).
    const prompt = Buffer.from(
      `{"model":"echo","messages":[{"role":"system","content":"${'lorem ipsum dolor sit amet '.repeat(550_000)}"},{"role":"user","content":"hi"}]}`,
    );
    const rounds: Array<[string, Array<[string, Buffer]>]> = [
      ['4 x chat, answered', Array.from({ length: 4 }, () => ['/v1/chat/completions', chat])],
      ['4 x chat, one 15 MB prompt each', Array.from({ length: 4 }, () => ['/v1/chat/completions', prompt])],
      ['4 x messages, translated', Array.from({ length: 4 }, () => ['/v1/messages', translated])],
      [
        'chat, messages, responses, count_tokens at once',
        [
          ['/v1/chat/completions', chat],
          ['/v1/messages', translated],
          ['/v1/responses', responses],
          ['/v1/messages/count_tokens', translated],
        ],
      ],
    ];
    const live: Array<{ name: string } & LiveReport> = [];
    for (const [name, requests] of rounds) {
      await probeReport();
      await liveReport();
      const statuses = await sendTogether(requests);
      // The round's measurement period runs on for 200 ms after the answers (see phase()).
      await new Promise((r) => setTimeout(r, 200));
      const report = await probeReport();
      live.push({ name, ...(await liveReport()) });
      phases.push({
        name: `concurrent: ${name}`,
        status: Math.max(...statuses),
        maxCpuMs: report.maxCpuMs,
        maxUserMs: report.maxUserMs,
        minorFaults: report.longest.minorFaults,
        maxWallMs: report.maxWallMs,
        probeMs: live.at(-1)!.maxMs,
      });
      expect(statuses).toEqual(requests.map(() => 200));
    }
    console.log(
      `live probe (its own process) during the concurrent rounds:\n${live.map((l) => `  ${l.name.padEnd(50)} answers ${String(l.answers).padStart(4)}  median ${l.medianMs.toFixed(1).padStart(6)} ms  max ${l.maxMs.toFixed(1).padStart(7)} ms`).join('\n')}`,
    );
    // The gateway answered its liveness probe throughout: most answers at once, none held for long. Loose bounds
    // (a loaded 2-core machine deschedules the prober and the gateway alike); the CPU bound is the strict one.
    for (const round of live) {
      expect(round.answers).toBeGreaterThan(5);
      expect(round.medianMs).toBeLessThan(MAX_BLOCK_MS);
      expect(round.maxMs).toBeLessThan(1000);
    }
    expectBounded();
  });

  /** The phases of the test that calls it: each test is judged by its own phases (one slow phase fails one test). */
  function expectBounded() {
    expect(gateway.child.exitCode).toBeNull();
    const own = phases.slice(firstPhaseOfTest);
    expect(own.length).toBeGreaterThan(0);
    const over = [
      ...own
        .filter((p) => p.maxUserMs > MAX_BLOCK_MS)
        .map((p) => `${p.name}: ${p.maxUserMs.toFixed(1)} ms of user CPU`),
      ...own
        .filter((p) => p.maxCpuMs > MAX_ROUND_CPU_MS)
        .map((p) => `${p.name}: ${p.maxCpuMs.toFixed(1)} ms of CPU`),
    ];
    expect(over).toEqual([]);
  }
});
