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
