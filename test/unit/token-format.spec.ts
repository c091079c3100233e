import { bearerToken, hashToken, issueToken, sameHash, tokenIdOf } from '../../src/auth/token-format';

describe('token format', () => {
  it('issues sy-<16 hex id>-<43 char secret> tokens with 256 random bits, never twice the same', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const { id, token, hash } = issueToken();
      expect(token).toMatch(/^sy-[0-9a-f]{16}-[A-Za-z0-9_-]{43}$/);
      expect(tokenIdOf(token)).toBe(id);
      expect(hash).toBe(hashToken(token));
      seen.add(token);
    }
    expect(seen.size).toBe(200);
  });

  it('rejects strings that are not shaped like a token', () => {
    const { token } = issueToken();
    for (const bad of [
      '',
      'sy-',
      token + 'x',
      token.slice(1),
      token.replace('sy-', 'sk-'),
      token.toUpperCase(),
    ]) {
      expect(tokenIdOf(bad)).toBeNull();
    }
  });

  it('compares hashes in constant time and only full-length digests', () => {
    const a = hashToken('a');
    expect(sameHash(a, hashToken('a'))).toBe(true);
    expect(sameHash(a, hashToken('b'))).toBe(false);
    expect(sameHash(a, a.slice(0, 10))).toBe(false);
  });

  it('reads a bearer token from the Authorization header', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer abc ')).toBe('abc');
    expect(bearerToken('Basic abc')).toBeNull();
    expect(bearerToken('Bearer')).toBeNull();
    expect(bearerToken(undefined)).toBeNull();
  });
});
