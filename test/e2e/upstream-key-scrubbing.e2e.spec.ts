import { KEY_FORMS, LeakyUpstream, type KeyForm } from '../support/leaky-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

/**
 * Vendors echo the key they were called with, in every field of an error (message, type, code, param, details),
 * whole or in part. None of it may reach a client: every client API, every family, before a stream starts and
 * inside one, in every form docs/api.md lists (Errors).
 */
const KEYS = {
  // Characters that URL-encoding changes, so the encoded form differs from the whole one.
  openai: 'sk-proj-Xq7Lm2Np9Rt4Vw8/Yz3Bc6Df1+Gh5Jk0Ms=',
  anthropic: 'sk-ant-api03-Pd4Fg7Hj2Kl5/Zx8Cv1Bn6+Mq9Wr3Ty0Ui',
  gemini: 'AIzaSyT3Vb8Nm1Qw6/Er4Ty9Ui2+Op7As5Df0Gh',
};
type Backend = 'oa' | 'oa-resp' | 'an' | 'gm';
const KEY_OF: Record<Backend, string> = {
  oa: KEYS.openai,
  'oa-resp': KEYS.openai,
  an: KEYS.anthropic,
  gm: KEYS.gemini,
};

type Api = 'chat' | 'responses' | 'messages' | 'count_tokens' | 'embeddings';
interface Case {
  api: Api;
  stream: boolean;
  backend: Backend;
  /** An HTTP status the vendor answers, or `stream` / `failed` for an in-band error after the stream began. */
  what: string;
}

const CLIENT_ERRORS: Record<Backend, string[]> = {
  oa: ['400', '409', '422', '429'],
  'oa-resp': ['400', '409', '422', '429'],
  an: ['400', '429'],
  gm: ['400', '429'],
};
const CASES: Case[] = [];
for (const backend of ['oa', 'an', 'gm'] as const) {
  for (const api of ['chat', 'responses', 'messages'] as const) {
    for (const stream of [false, true])
      for (const what of CLIENT_ERRORS[backend]) CASES.push({ api, stream, backend, what });
    CASES.push({ api, stream: true, backend, what: 'stream' });
  }
}
for (const stream of [false, true])
  for (const what of CLIENT_ERRORS['oa-resp'])
    CASES.push({ api: 'responses', stream, backend: 'oa-resp', what });
CASES.push(
  { api: 'responses', stream: true, backend: 'oa-resp', what: 'stream' },
  { api: 'responses', stream: true, backend: 'oa-resp', what: 'failed' },
);
// A 200 whose Response has `status: "failed"` and the vendor's error in it, not streamed.
CASES.push({ api: 'responses', stream: false, backend: 'oa-resp', what: 'failed' });
for (const backend of ['oa', 'gm'] as const)
  for (const what of CLIENT_ERRORS[backend]) CASES.push({ api: 'embeddings', stream: false, backend, what });
// count_tokens goes to an Anthropic backend natively (others are estimated without a call).
for (const what of CLIENT_ERRORS.an) CASES.push({ api: 'count_tokens', stream: false, backend: 'an', what });

const modelName = (backend: Backend, form: KeyForm, what: string, api: Api) =>
  `${backend}.${form}.${what}${api === 'embeddings' ? '.embed' : ''}`;

function body(api: Api, model: string, stream: boolean): object {
  if (api === 'chat') return { model, stream, messages: [{ role: 'user', content: 'hi' }] };
  if (api === 'responses') return { model, stream, input: 'hi' };
  if (api === 'messages')
    return { model, stream, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };
  if (api === 'count_tokens') return { model, messages: [{ role: 'user', content: 'hi' }] };
  return { model, input: 'hi' };
}
const PATHS: Record<Api, string> = {
  chat: '/v1/chat/completions',
  responses: '/v1/responses',
  messages: '/v1/messages',
  count_tokens: '/v1/messages/count_tokens',
  embeddings: '/v1/embeddings',
};

/** No piece of the key long enough to mean anything (8 characters), in its own or its URL-encoded form. */
function expectNoKey(text: string, key: string): void {
  for (const form of [key, encodeURIComponent(key)]) {
    for (let at = 0; at + 8 <= form.length; at++) {
      if (text.includes(form.slice(at, at + 8)))
        throw new Error(`the answer holds "${form.slice(at, at + 8)}" of the key:\n${text}`);
    }
  }
}

describe('upstream keys never reach a client, in any field of any error', () => {
  let leaky: LeakyUpstream;
  let gw: TestGateway;
  let token: string;

  beforeAll(async () => {
    leaky = await new LeakyUpstream().start();
    const models: Record<string, object> = {};
    for (const form of KEY_FORMS) {
      for (const { api, backend, what } of CASES) {
        models[modelName(backend, form, what, api)] = {
          backend,
          upstreamModel: `leak.${form}.${what}`,
          ...(api === 'embeddings' ? { kind: 'embedding' } : {}),
        };
      }
    }
    gw = await startTestGateway({
      upstreamUrl: leaky.url('openai'),
      config: {
        // One call per request: a 429 is not retried, so each answer is the vendor's first.
        routing: { retries: { attempts: 0 }, circuit: { failures: 10_000 } },
        backends: {
          oa: { type: 'openai', baseUrl: leaky.url('openai'), apiKey: KEYS.openai },
          'oa-resp': {
            type: 'openai',
            baseUrl: leaky.url('openai'),
            apiKey: KEYS.openai,
            responsesApi: true,
          },
          an: { type: 'anthropic', baseUrl: leaky.url('anthropic'), apiKey: KEYS.anthropic },
          gm: { type: 'gemini', baseUrl: leaky.url('gemini'), apiKey: KEYS.gemini },
        },
        models,
      },
    });
    ({ token } = await gw.teamToken('leak-check'));
  });
  afterAll(async () => {
    await gw.close();
    await leaky.stop();
  });

  describe.each(KEY_FORMS)('the key echoed %s', (form) => {
    it.each(
      CASES.map(
        (c) =>
          [
            `${c.api}${c.stream ? ' (streamed)' : ''} from ${c.backend}: ${/^\d+$/.test(c.what) ? `HTTP ${c.what}` : `in-band ${c.what}`}`,
            c,
          ] as const,
      ),
    )('%s', async (_name, { api, stream, backend, what }) => {
      const before = leaky.requests.length;
      const logsBefore = gw.rawLogs.length;
      const response = await fetch(`${gw.url}${PATHS[api]}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          ...(api === 'messages' || api === 'count_tokens' ? { 'anthropic-version': '2023-06-01' } : {}),
        },
        body: JSON.stringify(body(api, modelName(backend, form, what, api), stream)),
      });
      const text = await response.text();
      // The vendor was called and its error reached the client in some shape (not a refusal before the call).
      expect(leaky.requests.length).toBe(before + 1);
      if (/^\d+$/.test(what)) expect(response.status).toBe(what === '429' ? 429 : 400);
      else expect(text).toMatch(/error/);
      expectNoKey(text, KEY_OF[backend]);
      // Nor in the log the operator reads (the access line names the error's code).
      await new Promise((resolve) => setImmediate(resolve));
      expectNoKey(gw.rawLogs.slice(logsBefore).join('\n'), KEY_OF[backend]);
    });
  });
});
