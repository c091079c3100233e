import { formatRole, parseRole } from '../../src/access/roles';

describe('roles as config and the API spell them', () => {
  it.each(['org-admin', 'org-viewer', 'team-admin:payments', 'team-member:ml_research-2'])(
    '%s reads and writes back the same',
    (text) => {
      const role = parseRole(text);
      expect(role).toBeDefined();
      expect(formatRole(role!)).toBe(text);
    },
  );

  it('reads a team role with its team', () => {
    expect(parseRole('team-admin:payments')).toEqual({ kind: 'team-admin', team: 'payments' });
  });

  it.each([
    '',
    'admin',
    'org-admin:payments',
    'team-admin',
    'team-admin:',
    'team-member:Payments',
    'team-admin:a:b',
  ])('refuses %j', (text) => expect(parseRole(text)).toBeUndefined());
});
