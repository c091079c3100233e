import { chmodSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CredentialStore,
  defaultCredentialsPath,
  gatewayUrl,
  type StoredLogin,
} from '../../src/cli/credentials';
import { gatewayTarget } from '../../src/cli/gateway-client';
import { logout } from '../../src/cli/login';

const login = (token: string): StoredLogin => ({
  token,
  tokenId: token.slice(-4),
  subject: 'dave',
  email: 'dave@example.com',
  expiresAt: '2030-01-01T00:00:00.000Z',
});

describe("the CLI's stored logins", () => {
  const fresh = () =>
    new CredentialStore(
      join(mkdtempSync(join(tmpdir(), 'switchyard-creds-')), 'switchyard', 'credentials.json'),
    );

  it('keeps a login per gateway in a file only its owner reads (0600, folder 0700); the last login is the default', () => {
    const store = fresh();
    expect(store.get('https://gw.example.com')).toBeUndefined();
    expect(store.defaultUrl()).toBeUndefined();
    store.save('https://gw.example.com/', login('sy_admin_one'));
    expect(statSync(store.path).mode & 0o777).toBe(0o600);
    expect(statSync(join(store.path, '..')).mode & 0o777).toBe(0o700);
    store.save('https://other.example.com', login('sy_admin_two'));
    // One gateway however its URL is spelled (a trailing slash, a query).
    expect(store.get('https://gw.example.com')?.token).toBe('sy_admin_one');
    expect(store.get('https://gw.example.com/?x=1')?.token).toBe('sy_admin_one');
    expect(store.defaultUrl()).toBe('https://other.example.com');
    expect(JSON.parse(readFileSync(store.path, 'utf8')).gateways).toEqual({
      'https://gw.example.com': login('sy_admin_one'),
      'https://other.example.com': login('sy_admin_two'),
    });
  });

  it('puts a loosened file back to 0600 at the next write, and forgets a login (and the default with it)', () => {
    const store = fresh();
    store.save('https://gw.example.com', login('sy_admin_one'));
    chmodSync(store.path, 0o644);
    store.save('https://other.example.com', login('sy_admin_two'));
    expect(statSync(store.path).mode & 0o777).toBe(0o600);
    store.forget('https://gw.example.com');
    expect(store.get('https://gw.example.com')).toBeUndefined();
    expect(store.defaultUrl()).toBe('https://other.example.com');
    store.forget('https://other.example.com');
    expect(store.defaultUrl()).toBeUndefined();
    expect(statSync(store.path).mode & 0o777).toBe(0o600);
  });

  it('lives in $XDG_CONFIG_HOME/switchyard, else ~/.config/switchyard', () => {
    expect(defaultCredentialsPath({ XDG_CONFIG_HOME: '/x/conf' })).toBe(
      '/x/conf/switchyard/credentials.json',
    );
    expect(defaultCredentialsPath({})).toBe(join(homedir(), '.config', 'switchyard', 'credentials.json'));
  });

  it('takes http(s) gateway URLs only, without a user or password', () => {
    expect(gatewayUrl('https://gw.example.com/base/')).toBe('https://gw.example.com/base');
    expect(() => gatewayUrl('ftp://gw.example.com')).toThrow(/not a gateway URL/);
    expect(() => gatewayUrl('gw.example.com')).toThrow(/not a gateway URL/);
    expect(() => gatewayUrl('https://me:pw@gw.example.com')).toThrow(/no user or password/);
  });

  it('picks the gateway (--url, SWITCHYARD_URL, the last login) and its credential (the login, else the admin key)', () => {
    const store = fresh();
    // Nothing stored, nothing named: Redis.
    expect(gatewayTarget({}, {}, store)).toBeUndefined();
    expect(() => gatewayTarget({ url: 'https://gw.example.com' }, {}, store)).toThrow(
      /not signed in to https:\/\/gw.example.com: run `switchyard login --url https:\/\/gw.example.com`/,
    );
    expect(gatewayTarget({ url: 'https://gw.example.com' }, { SWITCHYARD_ADMIN_KEY: 'k' }, store)).toEqual({
      url: 'https://gw.example.com',
      credential: { kind: 'admin-key', key: 'k' },
    });
    store.save('https://gw.example.com', login('sy_admin_one'));
    const personal = {
      url: 'https://gw.example.com',
      credential: { kind: 'personal-token', token: 'sy_admin_one' },
    };
    expect(gatewayTarget({}, { SWITCHYARD_ADMIN_KEY: 'k' }, store)).toEqual(personal);
    expect(gatewayTarget({}, { SWITCHYARD_URL: 'https://gw.example.com/' }, store)).toEqual(personal);
    expect(gatewayTarget({ url: 'https://other.example.com' }, { SWITCHYARD_ADMIN_KEY: 'k' }, store)).toEqual(
      {
        url: 'https://other.example.com',
        credential: { kind: 'admin-key', key: 'k' },
      },
    );
    expect(gatewayTarget({ local: true }, {}, store)).toBeUndefined();
  });

  it('logs out of nothing with a plain refusal', async () => {
    const store = fresh();
    delete process.env.SWITCHYARD_URL;
    await expect(logout({}, store)).rejects.toThrow('not signed in to any gateway');
    await expect(logout({ url: 'https://gw.example.com' }, store)).rejects.toThrow(
      'not signed in to https://gw.example.com',
    );
  });
});
