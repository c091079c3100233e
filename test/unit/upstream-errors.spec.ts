import { mapUpstreamError } from '../../src/providers/upstream-errors';

const facts = (status: number, extra: Partial<Parameters<typeof mapUpstreamError>[0]> = {}) =>
  mapUpstreamError({ backendId: 'b', status, headers: {}, secrets: ['sk-live-abcdef123456'], ...extra });

describe('upstream error mapping', () => {
  it.each([
    [400, 400, 'invalid_request'],
    [401, 502, 'upstream_auth_failed'],
    [403, 502, 'upstream_auth_failed'],
    [404, 502, 'upstream_error'],
    [408, 504, 'upstream_timeout'],
    [413, 413, 'invalid_request'],
    [422, 400, 'invalid_request'],
    [429, 429, 'rate_limit_exceeded'],
    [500, 502, 'upstream_error'],
    [502, 502, 'upstream_error'],
    [503, 503, 'upstream_unavailable'],
    [504, 504, 'upstream_timeout'],
    [529, 503, 'upstream_unavailable'],
  ])('upstream %i -> %i (%s)', (upstream, status, code) => {
    const error = facts(upstream);
    expect(error.status).toBe(status);
    expect(error.code).toBe(code);
    const body = error.toBody().error;
    expect(body).toEqual({
      message: expect.any(String),
      type: expect.any(String),
      param: null,
      code: body.code,
    });
    expect(body.code === null || typeof body.code === 'string').toBe(true);
  });

  it('keeps the vendor code and param of a client error, and Retry-After of a 429', () => {
    expect(
      facts(400, { code: 'context_length_exceeded', param: 'messages', message: 'too long' }).toBody().error,
    ).toEqual({
      message: 'too long',
      type: 'invalid_request_error',
      param: 'messages',
      code: 'context_length_exceeded',
    });
    expect(facts(429, { headers: { 'retry-after': '3', 'retry-after-ms': '2500' } }).headers).toEqual({
      'retry-after': '3',
      'retry-after-ms': '2500',
    });
  });

  it.each([
    ['without its prefix', 'Invalid key: live-abcdef123456.'],
    ['as its body alone', 'key abcdef123456 is not valid'],
    ['masked in the middle', 'Incorrect API key provided: live-abc****f123456'],
    ['truncated', 'key starting sk-live-abcdef12...'],
    ['URL-encoded', 'see https://example.test/?key=sk-live-abcdef123456&x=1'],
    ['glued to other text', 'Authorization=Bearersk-live-abcdef123456,scope=all'],
  ])('scrubs the configured key %s', (_form, message) => {
    const error = facts(400, { message });
    expect(error.message).toContain('[redacted]');
    for (let at = 0; at + 8 <= 'sk-live-abcdef123456'.length; at++)
      expect(error.message).not.toContain('sk-live-abcdef123456'.slice(at, at + 8));
  });

  it.each([400, 409, 422, 429])(
    'scrubs the key from every field a vendor %i passes through (type, code, param), not only the message',
    (status) => {
      const key = 'sk-live-abcdef123456';
      const body = facts(status, {
        message: `bad ${key}`,
        type: key,
        code: `code_${key}`,
        param: encodeURIComponent(key),
      }).toBody().error;
      for (const value of Object.values(body)) {
        if (value === null) continue;
        for (let at = 0; at + 8 <= key.length; at++) expect(value).not.toContain(key.slice(at, at + 8));
      }
      if (status !== 429) expect(body.param).toBe('[redacted]'); // a 429 carries no param
    },
  );

  it('drops a Retry-After that is neither seconds nor a date', () => {
    expect(facts(429, { headers: { 'retry-after': 'sk-live-abcdef123456' } }).headers).toEqual({});
    expect(facts(503, { headers: { 'retry-after': 'Wed, 21 Oct 2026 07:28:00 GMT' } }).headers).toEqual({
      'retry-after': 'Wed, 21 Oct 2026 07:28:00 GMT',
    });
  });

  it("scrubError cleans every string of an error built elsewhere from a vendor's words, and keeps the rest", () => {
    const { GatewayException } = jest.requireActual('../../src/core/errors/gateway.exception');
    const { scrubError } = jest.requireActual('../../src/providers/upstream-errors');
    const leaky = new GatewayException(
      'upstream_error',
      'failed (sk-live-abcdef123456): key live-abcdef123456',
      { wireCode: 'sk-live-abcdef123456', param: 'abcdef123456x', atCapacity: true },
    );
    const clean = scrubError(leaky, ['sk-live-abcdef123456']);
    expect(JSON.stringify(clean.toBody())).not.toMatch(/abcdef12|live-abc/);
    expect(clean).toMatchObject({
      code: 'upstream_error',
      status: 502,
      atCapacity: true,
      wireCode: '[redacted]',
    });
    const plain = new GatewayException('upstream_error', 'nothing secret here');
    expect(scrubError(plain, ['sk-live-abcdef123456'])).toBe(plain);
  });

  it("a refused key (401/403) or an unknown upstream model (404) is the deployment's fault; the vendor's words are kept for the log only", () => {
    for (const status of [401, 403, 404])
      expect(
        facts(status, { message: 'Incorrect API key provided: sk-live-abcdef123456' }).deploymentFault,
      ).toBe(true);
    for (const status of [400, 429, 500, 503]) expect(facts(status).deploymentFault).toBe(false);
    const refused = facts(401, { message: 'Incorrect API key provided: sk-live-abcdef123456' });
    expect(refused.message).toBe('Backend "b" rejected the gateway\'s credentials.');
    expect(refused.upstream).toEqual({ status: 401, message: 'Incorrect API key provided: [redacted]' });
  });

  it('leaves ordinary words of a message alone', () => {
    expect(facts(400, { message: 'The parameter max_tokens is too large for this model.' }).message).toBe(
      'The parameter max_tokens is too large for this model.',
    );
  });

  it('scrubs the backend key and anything key-shaped from vendor messages', () => {
    const error = facts(400, {
      message: 'key sk-live-abcdef123456 and Incorrect API key provided: sk-proj-****abcd',
    });
    expect(error.message).not.toContain('abcdef123456');
    expect(error.message).not.toContain('sk-proj');
  });
});

describe('what counts as an upstream failure (switchyard_upstream_errors_total)', () => {
  const { GatewayException } = jest.requireActual('../../src/core/errors/gateway.exception');
  const { isUpstreamFailure } = jest.requireActual('../../src/providers/upstream-errors');
  it.each([
    ['upstream_error', true],
    ['upstream_timeout', true],
    ['rate_limit_exceeded', true],
    ['upstream_busy', true],
    ['invalid_request', false],
    ['server_shutting_down', false],
  ])('%s -> %s', (code, counted) => {
    expect(isUpstreamFailure(new GatewayException(code, 'x'))).toBe(counted);
  });
});

describe('upstream error mapping: exact words, types and headers', () => {
  const { GatewayException } = jest.requireActual('../../src/core/errors/gateway.exception');
  const { backendSecrets, scrubError } = jest.requireActual('../../src/providers/upstream-errors');
  const said = (status: number, message?: string) => facts(status, message ? { message } : {});

  it.each([
    [404, 'slow', 'Backend "b" failed with HTTP 404: slow'],
    [404, undefined, 'Backend "b" failed with HTTP 404.'],
    [429, 'slow', 'Backend "b" is rate limiting: slow'],
    [429, undefined, 'Backend "b" is rate limiting.'],
    [400, undefined, 'Backend "b" rejected the request.'],
    [409, 'conflict', 'conflict'],
    [408, 'late', 'Backend "b" timed out (HTTP 408).'],
    [504, undefined, 'Backend "b" timed out (HTTP 504).'],
    [503, 'busy', 'Backend "b" is overloaded or unavailable: busy'],
    [529, undefined, 'Backend "b" is overloaded or unavailable.'],
    [500, 'boom', 'Backend "b" failed with HTTP 500: boom'],
    [418, undefined, 'Backend "b" failed with HTTP 418.'],
  ])('HTTP %i with vendor message %s -> "%s"', (status, message, expected) => {
    expect(said(status, message).message).toBe(expected);
  });

  it('keeps what the upstream said (status and scrubbed words) on every error', () => {
    expect(said(500, 'boom').upstream).toEqual({ status: 500, message: 'boom' });
    expect(said(429).upstream).toEqual({ status: 429, message: undefined });
  });

  it("a 429 keeps the vendor's type and code, or takes OpenAI's", () => {
    expect(facts(429).toBody().error).toEqual({
      message: 'Backend "b" is rate limiting.',
      type: 'rate_limit_error',
      param: null,
      code: 'rate_limit_exceeded',
    });
    expect(facts(429, { type: 'tokens', code: 'tpm' }).toBody().error).toMatchObject({
      type: 'tokens',
      code: 'tpm',
    });
  });

  it('a client error keeps a 413 as 413 and the vendor type; without one it is invalid_request_error with no code', () => {
    expect(facts(413, { type: 'request_too_large', message: 'too big' })).toMatchObject({
      status: 413,
      type: 'request_too_large',
      wireCode: null,
    });
    expect(facts(409)).toMatchObject({
      status: 400,
      type: 'invalid_request_error',
      wireCode: null,
      param: null,
    });
  });

  it('Retry-After: seconds (with a fraction, trimmed) and HTTP dates pass; an impossible date does not', () => {
    expect(facts(429, { headers: { 'retry-after': ' 1.5 ' } }).headers).toEqual({ 'retry-after': '1.5' });
    expect(facts(429, { headers: { 'retry-after': ['7', '9'] } }).headers).toEqual({ 'retry-after': '7' });
    expect(facts(429, { headers: { 'retry-after': 'Wed, 99 Oct 2026 07:28:00 GMT' } }).headers).toEqual({});
    expect(facts(429, { headers: { 'retry-after': 'x Wed, 21 Oct 2026 07:28:00 GMT' } }).headers).toEqual({});
    expect(facts(429, { headers: { 'retry-after': '1.5x' } }).headers).toEqual({});
    expect(facts(503, { headers: { 'retry-after': '30' } }).headers).toEqual({ 'retry-after': '30' });
    expect(facts(503, { headers: { 'retry-after-ms': '30' } }).headers).toEqual({});
    expect(facts(500, { headers: { 'retry-after': '30' } }).headers).toEqual({});
  });

  it('backendSecrets: the API key and the values of credential-like extra headers, without Bearer/Basic', () => {
    expect(
      backendSecrets({
        apiKey: 'main-key-1234',
        headers: {
          'api-key': 'azure-key-5678',
          Authorization: 'Bearer tok-abcdefgh',
          'X-Auth-Token': 'basic xyz-12345678',
          'x-client-secret': 's3cr3t-value',
          'x-request-source': 'gateway',
        },
      }),
    ).toEqual(['main-key-1234', 'azure-key-5678', 'tok-abcdefgh', 'xyz-12345678', 's3cr3t-value']);
    expect(backendSecrets({})).toEqual([]);
    expect(backendSecrets({ apiKey: '' })).toEqual([]);
  });

  it('scrub: a key shorter than 4 characters is not looked for; words without 8 key characters stay', () => {
    const error = mapUpstreamError({
      backendId: 'b',
      status: 400,
      message: 'abc is short and so is a1b2c3d',
      headers: {},
      secrets: ['abc', undefined, 'a1b2c3d4e5f6'],
    });
    expect(error.message).toBe('abc is short and so is a1b2c3d');
  });

  it('scrub: key-shaped words of other credentials (sk-, sy-, key- and 6 more characters) go too', () => {
    const error = mapUpstreamError({
      backendId: 'b',
      status: 400,
      message: 'tokens sk-abc123, sy-abcdef, key-1234567 and sk-abcd stay apart',
      headers: {},
      secrets: [],
    });
    expect(error.message).toBe('tokens [redacted], [redacted], [redacted] and sk-abcd stay apart');
  });

  it('scrub: the key URL-encoded, and a word holding an 8-character piece of its tail', () => {
    const key = 'k3y/with+chars=99';
    const error = mapUpstreamError({
      backendId: 'b',
      status: 400,
      message: `bad ${encodeURIComponent(key)} and xx${key.slice(8, 16)}yy`,
      headers: {},
      secrets: [key],
    });
    expect(error.message).toBe('bad [redacted] and [redacted]');
  });

  it('scrubError keeps the gateway own type and codes, cleans vendor ones, headers and what the upstream said', () => {
    const key = 'vendorkey-0123456789';
    const leaky = new GatewayException('upstream_error', `failed: ${key}`, {
      type: `t-${key}`,
      param: `p-${key}`,
      headers: { 'x-echo': key, 'x-plain': 'fine' },
      status: 503,
      deploymentFault: true,
      upstream: { status: 500, message: `said ${key}` },
      cause: 'why',
    });
    const clean = scrubError(leaky, [key]);
    expect(clean).toMatchObject({
      code: 'upstream_error',
      message: 'failed: [redacted]',
      type: 't-[redacted]',
      param: 'p-[redacted]',
      wireCode: 'upstream_error',
      headers: { 'x-echo': '[redacted]', 'x-plain': 'fine' },
      status: 503,
      deploymentFault: true,
      atCapacity: false,
      upstream: { status: 500, message: 'said [redacted]' },
      cause: 'why',
    });
    const own = new GatewayException('upstream_error', 'plain words', { headers: { 'x-echo': key } });
    const cleaned = scrubError(own, [key]);
    expect(cleaned === own).toBe(false);
    expect(cleaned).toMatchObject({ type: 'server_error', param: null, headers: { 'x-echo': '[redacted]' } });
    const ownType = new GatewayException('upstream_error', 'x', {
      type: 'server_error',
      upstream: { status: 502 },
    });
    expect(scrubError(ownType, ['server_error-long'])).toBe(ownType);
  });

  it.each([
    [new GatewayException('invalid_request', 'x', { status: 429 }), true],
    [new GatewayException('upstream_error', 'x', { status: 500 }), true],
    [new GatewayException('upstream_error', 'x', { status: 499 }), false],
    [new GatewayException('server_shutting_down', 'x', { status: 503 }), false],
  ])('isUpstreamFailure by status: %s', (error, counted) => {
    const { isUpstreamFailure } = jest.requireActual('../../src/providers/upstream-errors');
    expect(isUpstreamFailure(error)).toBe(counted);
  });
});

describe('scrub and scrubError: each rule on its own', () => {
  const { GatewayException } = jest.requireActual('../../src/core/errors/gateway.exception');
  const { backendSecrets, scrubError } = jest.requireActual('../../src/providers/upstream-errors');
  const message = (text: string, secrets: Array<string | undefined>) =>
    mapUpstreamError({ backendId: 'b', status: 400, message: text, headers: {}, secrets }).message;

  it('a key of 4 characters is removed where it stands whole', () => {
    expect(message('the key wxyz was refused', ['wxyz'])).toBe('the key [redacted] was refused');
  });

  it('with several keys, a word sharing a piece with any one of them is removed', () => {
    expect(message('saw abcdefgh0000 here', ['abcdefgh1111', 'zzzzzzzz2222'])).toBe('saw [redacted] here');
  });

  it('a masked word whose visible pieces are shorter than 8 characters stays', () => {
    expect(message('code ab****56 stays', ['sk-live-abcdef123456'])).toBe('code ab****56 stays');
  });

  it("the last whole 8-character piece of a key's tail is looked for too", () => {
    expect(message('saw zz12345678 here', ['abcdefgh12345678'])).toBe('saw [redacted] here');
  });

  it('Bearer and Basic are stripped only at the start of a header value, with any spaces after them', () => {
    expect(
      backendSecrets({
        headers: { Authorization: 'Bearer  two-spaces-1', 'x-api-key': 'abcBearer xyz-2' },
      }),
    ).toEqual(['two-spaces-1', 'abcBearer xyz-2']);
  });

  it('Retry-After: a decimal with two digits passes; a date with text after GMT does not', () => {
    expect(facts(429, { headers: { 'retry-after': '1.25' } }).headers).toEqual({ 'retry-after': '1.25' });
    expect(facts(429, { headers: { 'retry-after': 'Wed, 21 Oct 2026 07:28:00 GMTx' } }).headers).toEqual({});
  });

  it('a timeout keeps what the upstream said', () => {
    expect(facts(408, { message: 'late' }).upstream).toEqual({ status: 408, message: 'late' });
  });

  const key = 'vendorkey-0123456789';
  it.each([
    ['the message', { message: `failed ${key}` }, { message: 'failed [redacted]' }],
    ['the type', { type: `t-${key}` }, { type: 't-[redacted]' }],
    ['the param', { param: `p-${key}` }, { param: 'p-[redacted]' }],
    ['the code', { wireCode: `c-${key}` }, { wireCode: 'c-[redacted]' }],
    [
      'what the upstream said',
      { upstream: { status: 500, message: key } },
      { upstream: { status: 500, message: '[redacted]' } },
    ],
    ['a header', { headers: { 'x-echo': key } }, { headers: { 'x-echo': '[redacted]' } }],
  ])('scrubError: a key in %s alone makes a cleaned copy', (_where, fields, cleaned) => {
    const { message: text = 'plain', ...options } = fields as Record<string, any>;
    const error = new GatewayException('upstream_error', text, options);
    const clean = scrubError(error, [key]);
    expect(clean === error).toBe(false);
    expect(clean).toMatchObject(cleaned);
    expect(JSON.stringify({ ...clean, message: clean.message })).not.toContain('0123456789');
  });

  it('scrubError returns the very error when nothing in it needed cleaning, headers included', () => {
    const error = new GatewayException('rate_limit_exceeded', 'slow down', {
      headers: { 'retry-after': '1' },
      upstream: { status: 429, message: 'slow down' },
      param: 'model',
      wireCode: 'vendor_code',
      type: 'tokens',
    });
    expect(scrubError(error, [key])).toBe(error);
  });
});
