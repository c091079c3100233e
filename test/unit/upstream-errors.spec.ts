import { mapUpstreamError } from '../../src/providers/shared/upstream-errors';

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
    expect(body).toEqual({ message: expect.any(String), type: expect.any(String), param: null, code: body.code });
    expect(body.code === null || typeof body.code === 'string').toBe(true);
  });

  it('keeps the vendor code and param of a client error, and Retry-After of a 429', () => {
    expect(facts(400, { code: 'context_length_exceeded', param: 'messages', message: 'too long' }).toBody().error).toEqual({
      message: 'too long',
      type: 'invalid_request_error',
      param: 'messages',
      code: 'context_length_exceeded',
    });
    expect(facts(429, { headers: { 'retry-after': '3', 'retry-after-ms': '2500' } }).headers).toEqual({ 'retry-after': '3', 'retry-after-ms': '2500' });
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
    for (let at = 0; at + 8 <= 'sk-live-abcdef123456'.length; at++) expect(error.message).not.toContain('sk-live-abcdef123456'.slice(at, at + 8));
  });

  it('leaves ordinary words of a message alone', () => {
    expect(facts(400, { message: 'The parameter max_tokens is too large for this model.' }).message).toBe('The parameter max_tokens is too large for this model.');
  });

  it('scrubs the backend key and anything key-shaped from vendor messages', () => {
    const error = facts(400, { message: 'key sk-live-abcdef123456 and Incorrect API key provided: sk-proj-****abcd' });
    expect(error.message).not.toContain('abcdef123456');
    expect(error.message).not.toContain('sk-proj');
  });
});

describe('what counts as an upstream failure (switchyard_upstream_errors_total)', () => {
  const { GatewayException } = jest.requireActual('../../src/common/errors/gateway.exception');
  const { isUpstreamFailure } = jest.requireActual('../../src/providers/shared/upstream-errors');
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
