import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AppLogger } from '../../src/common/logging/logger';
import type { GatewayConfig, OidcConfig } from '../../src/config/config.schema';
import { noRoleReason } from '../../src/console/sso/group-roles';
import { OidcClient } from '../../src/console/sso/oidc-client';
import type { SsoFlow } from '../../src/console/sso/sso-flows';

/**
 * The console's exchange of the provider's answer (openid-client against a provider stand-in on a port): a provider
 * that does not answer the token request is 503 sso_unavailable (try again later), one that answers no is 401
 * sso_failed. openid-client wraps its timeout in a ClientError (code OAUTH_TIMEOUT), and under Jest fetch's TypeError
 * is another realm's than the code's: the mapping reads names and codes down the causes, not `instanceof`.
 */
describe("the console's OpenID Connect client, when the provider's token endpoint fails", () => {
  let server: Server;
  let origin = '';
  let closedPort = 0;
  const hanging: Array<() => void> = [];

  beforeAll(async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    closedPort = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    server = createServer((req, res) => {
      const discovery = /^\/(\w+)\/\.well-known\/openid-configuration$/.exec(req.url ?? '');
      if (discovery) {
        const issuer = `${origin}/${discovery[1]}`;
        const tokenEndpoints: Record<string, string> = {
          unreachable: `http://127.0.0.1:${closedPort}/token`,
          hanging: `${origin}/hang`,
          refusing: `${origin}/refuse`,
        };
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            issuer,
            authorization_endpoint: `${issuer}/auth`,
            token_endpoint: tokenEndpoints[discovery[1]],
            jwks_uri: `${issuer}/jwks`,
            response_types_supported: ['code'],
            subject_types_supported: ['public'],
            id_token_signing_alg_values_supported: ['RS256'],
          }),
        );
      }
      if (req.url === '/hang') return void hanging.push(() => res.destroy());
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: 'invalid_grant', error_description: 'grant request is invalid' }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    hanging.forEach((end) => end());
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  /** What the callback's exchange throws, with a provider whose token endpoint behaves as `name` says. */
  const exchangeAt = async (name: string) => {
    const oidc = {
      issuer: `${origin}/${name}`,
      clientId: 'switchyard',
      clientSecret: 'secret',
      scopes: ['openid'],
      groupsClaim: 'groups',
      groupRoles: {},
    };
    const warnings: string[] = [];
    const logger = {
      pino: {
        warn: (fields: { reason: string }, line: string) => warnings.push(`${line}: ${fields.reason}`),
      },
    };
    const client = new OidcClient(
      { auth: { oidc } } as unknown as GatewayConfig,
      logger as unknown as AppLogger,
    );
    const flow: SsoFlow = {
      codeVerifier: 'v'.repeat(43),
      state: 'the-state',
      nonce: 'the-nonce',
      returnTo: '/console/',
      redirectUrl: 'http://127.0.0.1:1/console/api/sso/callback',
    };
    const error = await client
      .signedIn(new URL(`${flow.redirectUrl}?code=the-code&state=the-state`), flow)
      .then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
    return { error: error as { status?: number; code?: string }, warnings };
  };

  it('answers 503 sso_unavailable when the token endpoint refuses the connection', async () => {
    const { error, warnings } = await exchangeAt('unreachable');
    expect({ status: error.status, code: error.code }).toEqual({ status: 503, code: 'sso_unavailable' });
    expect(warnings.join()).toMatch(/the identity provider did not answer: .*fetch failed/);
  });

  it('answers 503 sso_unavailable when the token endpoint does not answer within the timeout (10 s)', async () => {
    const { error, warnings } = await exchangeAt('hanging');
    expect({ status: error.status, code: error.code }).toEqual({ status: 503, code: 'sso_unavailable' });
    expect(warnings.join()).toMatch(/the identity provider did not answer: .*(OAUTH_TIMEOUT|TimeoutError)/);
  }, 30_000);

  it('answers 401 sso_failed when the provider answers and refuses the code', async () => {
    const { error, warnings } = await exchangeAt('refusing');
    expect({ status: error.status, code: error.code }).toEqual({ status: 401, code: 'sso_failed' });
    expect(warnings.join()).toMatch(/identity provider refused: .*invalid_grant/);
  });
});

/** What the gateway logs when a person's groups give no role: a missing claim and unmapped groups need other fixes. */
describe('the logged reason a sign-in gave no role', () => {
  const oidc = {
    groupsClaim: 'groups',
    groupRoles: { 'switchyard-admins': 'org-admin' },
  } as unknown as OidcConfig;

  it('says the ID token has no groups claim at all (a mapper, scope or token configuration missing)', () => {
    expect(noRoleReason({ sub: 'ana' }, oidc)).toBe(
      'no role for ana: the ID token has no "groups" claim (the provider must put the groups there: docs/sso.md, What each provider needs)',
    );
    expect(noRoleReason({ sub: 'ana', groups: [] }, oidc)).toBe(
      'no role for ana: the ID token\'s "groups" claim lists no group',
    );
  });

  it('names the groups the token listed (as the provider spells them), at most 20', () => {
    expect(noRoleReason({ sub: 'ana', groups: ['/switchyard-admins', '/sales'] }, oidc)).toBe(
      'no role for ana: no group in auth.oidc.groupRoles among the ID token\'s "groups": "/switchyard-admins", "/sales"',
    );
    const many = Array.from({ length: 25 }, (_, i) => `g${i}`);
    expect(noRoleReason({ sub: 'ana', groups: many }, oidc)).toMatch(/"g19" and 5 more$/);
  });
});
