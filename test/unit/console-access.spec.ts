import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { grantsEverywhere, grantsOn, PERMISSIONS, type Permission } from '../../src/access/permissions';
import { formatRole, ROLE_KINDS, type Role } from '../../src/access/roles';
import { may, mayAnywhere, teamsWhere, useRoles } from '../../src/console/web/access';

const SRC = join(__dirname, '../../src');
const WEB = 'console/web/';

/** A relative import of `file` (relative to src/), resolved to the file it names. */
function resolved(file: string, specifier: string): string {
  const base = posix.normalize(posix.join(posix.dirname(file), specifier));
  const found = ['', '.ts', '.tsx', '/index.ts']
    .map((end) => base + end)
    .find((p) => existsSync(join(SRC, p)));
  if (!found) throw new Error(`${file}: cannot resolve ${specifier}`);
  return found;
}

/** Every import of `file`, type-only ones aside (they leave nothing in the bundle). */
function importsOf(file: string): string[] {
  const text = readFileSync(join(SRC, file), 'utf8');
  return [...text.matchAll(/^import\s+(?!type\s)[^;]*?from\s+'([^']+)'/gms)].map((m) => m[1]);
}

/**
 * What the console's page asks of the person's roles (src/console/web/access.ts) is the server's own permission
 * table, imported at build time: these checks keep that import possible (the server modules the page pulls in
 * bring no package with them, Nest least of all) and the console's reading of the session's roles equal to the
 * server's answers.
 */
describe("the console's permissions", () => {
  it('pulls in only server modules that import no package (nothing of Nest in the bundle)', () => {
    const pages = (function walk(dir: string): string[] {
      return readdirSync(join(SRC, dir), { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory()
          ? walk(`${dir}${entry.name}/`)
          : /\.tsx?$/.test(entry.name)
            ? [`${dir}${entry.name}`]
            : [],
      );
    })(WEB);
    const seen = new Set<string>();
    const packagesOf = new Map<string, string[]>();
    const visit = (file: string) => {
      for (const specifier of importsOf(file)) {
        if (!specifier.startsWith('.')) continue;
        const target = resolved(file, specifier);
        if (target.startsWith(WEB) || seen.has(target)) continue;
        seen.add(target);
        packagesOf.set(
          target,
          importsOf(target).filter((s) => !s.startsWith('.')),
        );
        visit(target);
      }
    };
    pages.forEach(visit);
    expect([...seen]).toEqual(expect.arrayContaining(['access/permissions.ts', 'access/roles.ts']));
    expect(Object.fromEntries([...packagesOf].filter(([, packages]) => packages.length > 0))).toEqual({});
  });

  it("answers as the server does, for every permission and every role kind, on the role's team and another", () => {
    const roles: Role[] = ROLE_KINDS.map((kind) =>
      kind === 'org-admin' || kind === 'org-viewer' ? { kind } : { kind, team: 'team-a' },
    );
    for (const role of roles) {
      useRoles([formatRole(role)]);
      for (const permission of Object.keys(PERMISSIONS) as Permission[]) {
        const case_ = `${formatRole(role)} ${permission}`;
        expect([case_, may(permission)]).toEqual([case_, grantsEverywhere([role], permission)]);
        for (const team of ['team-a', 'team-b'])
          expect([case_, team, may(permission, team)]).toEqual([
            case_,
            team,
            grantsOn([role], permission, team),
          ]);
      }
    }
  });

  it("reads the session's roles as strings, a team role for its team only, and ignores what is not a role", () => {
    useRoles(['team-admin:team-a', 'team-member:team-b', 'owner', 'team-admin:']);
    expect(teamsWhere('tokens:write')).toEqual(['team-a']);
    expect(teamsWhere('usage:read')).toEqual(['team-a', 'team-b']);
    expect(may('members:write', 'team-a')).toBe(true);
    expect(may('members:write', 'team-b')).toBe(false);
    expect(mayAnywhere('audit:read')).toBe(true);
    expect(mayAnywhere('deployments:read')).toBe(false);
    useRoles(['org-viewer']);
    expect(teamsWhere('tokens:read')).toBe('all');
    expect(mayAnywhere('tokens:write')).toBe(false);
    useRoles([]);
    expect(mayAnywhere('usage:read')).toBe(false);
  });
});
