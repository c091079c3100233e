import { personOf, rolesOf } from '../../src/console/sso/group-roles';
import { buildConfig } from '../support/config';

const minimal = { admin: { apiKey: 'k' } };
const oidc = {
  issuer: 'https://login.example.com/realms/acme',
  clientId: 'switchyard',
  clientSecret: 's3cret',
};
const problemsOf = (auth: unknown, more: object = {}) => {
  try {
    buildConfig({ ...minimal, auth, ...more }, {});
    return [];
  } catch (error) {
    return (error as Error).message
      .split('\n')
      .slice(1)
      .map((line) => line.replace(/^\s+- /, ''));
  }
};

describe('auth.oidc and console.adminKeySignIn', () => {
  it('defaults: no SSO, the admin-key sign-in on; with auth.oidc, its scopes and groups claim', () => {
    const none = buildConfig(minimal, {});
    expect(none.auth.oidc).toBeUndefined();
    expect(none.console.adminKeySignIn).toBe(true);
    expect(buildConfig({ ...minimal, auth: { oidc } }, {}).auth.oidc).toMatchObject({
      scopes: ['openid', 'email', 'profile'],
      groupsClaim: 'groups',
      groupRoles: {},
    });
    expect(buildConfig({ ...minimal, console: { adminKeySignIn: false } }, {}).console.adminKeySignIn).toBe(
      false,
    );
  });

  it('refuses a role that is not one, naming the group, and what else cannot work', () => {
    const groupRoles = {
      admins: 'org-admin',
      leads: 'team-admin:team-a',
      typo: 'org-admn',
      bad: 'team-admin:',
    };
    expect(problemsOf({ oidc: { ...oidc, groupRoles } })).toEqual([
      'auth.oidc.groupRoles.typo: "org-admn" is not a role (org-admin, org-viewer, team-admin:<team>, team-member:<team>)',
      'auth.oidc.groupRoles.bad: "team-admin:" is not a role (org-admin, org-viewer, team-admin:<team>, team-member:<team>)',
    ]);
    expect(problemsOf({ oidc: { ...oidc, scopes: ['email'] } })).toEqual([
      'auth.oidc.scopes: must include "openid"',
    ]);
    expect(problemsOf({ oidc: { ...oidc, issuer: 'http://login.example.com' } })).toEqual([
      'auth.oidc.issuer: must be https (plain http only to localhost)',
    ]);
    expect(problemsOf({ oidc: { ...oidc, issuer: 'http://127.0.0.2:5556' } })).toEqual([]);
    expect(problemsOf({ oidc: { issuer: oidc.issuer, clientId: 'x' } })).toEqual([
      'auth.oidc.clientSecret: must be set (the client secret registered at the provider)',
    ]);
    // The CLI's client: a public one of its own, with an id.
    expect(problemsOf({ oidc: { ...oidc, cli: { clientId: 'switchyard-cli' } } })).toEqual([]);
    expect(problemsOf({ oidc: { ...oidc, cli: { clientId: 'switchyard' } } })).toEqual([
      "auth.oidc.cli.clientId: must be a public client of its own (no secret), not the console's auth.oidc.clientId",
    ]);
    expect(problemsOf({ oidc: { ...oidc, cli: {} } })).toEqual([
      'auth.oidc.cli.clientId: must be set (the public client id registered at the provider for the CLI)',
    ]);
    expect(problemsOf({ oidc: { ...oidc, groupRole: {} } })).toEqual([
      'auth.oidc.groupRole: property groupRole should not exist',
    ]);
  });

  it('maps the groups claim (a list or one string) to each role once; unknown groups give none', () => {
    const config = buildConfig(
      {
        ...minimal,
        auth: {
          oidc: {
            ...oidc,
            groupsClaim: 'roles',
            groupRoles: { a: 'org-viewer', b: 'team-member:x', c: 'org-viewer' },
          },
        },
      },
      {},
    ).auth.oidc!;
    expect(rolesOf({ sub: 's', roles: ['a', 'b', 'c', 'zzz', 7] }, config)).toEqual([
      { kind: 'org-viewer' },
      { kind: 'team-member', team: 'x' },
    ]);
    expect(rolesOf({ sub: 's', roles: 'b' }, config)).toEqual([{ kind: 'team-member', team: 'x' }]);
    expect(rolesOf({ sub: 's', groups: ['a'] }, config)).toEqual([]);
    // A group named like an Object.prototype member is just a group.
    expect(rolesOf({ sub: 's', roles: ['constructor', 'toString'] }, config)).toEqual([]);
  });

  it('names the person by subject, email and name; an email the provider has not verified is left out', () => {
    expect(personOf({ sub: 's', email: 'a@example.com', name: 'A', email_verified: true })).toEqual({
      subject: 's',
      email: 'a@example.com',
      name: 'A',
    });
    expect(personOf({ sub: 's', email: 'a@example.com', email_verified: false })).toEqual({ subject: 's' });
    expect(personOf({ sub: 's', email: 3, name: '' })).toEqual({ subject: 's' });
  });
});
