import { GatewayException } from '../core/errors/gateway.exception';
import type { LimitName } from '../core/limit-settings';
import { compileModelGlobs } from '../routing/model-glob';
import type { Team, TeamChanges } from '../teams/team.store';

/**
 * What a team-admin may change of their team (`teams:narrow`, access/permissions.ts): there are no ceilings an
 * org-admin sets yet, so the team's current models and limits are the ceiling. Models: each name or glob must be
 * one the team already allows (a glob is tested as written, so `gpt-*` under `gpt-6-*` is refused: it names
 * more). Limits: lowered or added, never raised or removed. Labels and the disabled flag are the organisation's.
 * Anything else is 403 permission_denied naming the field; an org-admin can make it.
 */
export function assertNarrowing(team: Team, changes: TeamChanges): void {
  for (const field of ['metadata', 'disabled'] as const)
    if (changes[field] !== undefined) refuse(field, `a team-admin cannot change a team's ${field}`);
  if (changes.models) {
    const allowed = compileModelGlobs(team.models);
    const wider = changes.models.filter((model) => !allowed(model));
    if (wider.length > 0)
      refuse(
        'models',
        `${wider.map((m) => `\`${m}\``).join(', ')} is not among what team "${team.id}" may use`,
      );
  }
  if (changes.limits === null && Object.keys(team.limits).length > 0)
    refuse('limits', 'removing every limit widens them');
  for (const [name, value] of Object.entries(changes.limits ?? {})) {
    const current = team.limits[name as LimitName];
    if (current === undefined || value === undefined) continue;
    if (value === null) refuse(`limits.${name}`, `removing ${name} (${current}) widens it`);
    else if (value > current) refuse(`limits.${name}`, `${value} is above the team's ${current}`);
  }
}

function refuse(param: string, why: string): never {
  throw new GatewayException(
    'permission_denied',
    `A team-admin may only narrow their team's models and limits: ${why}; an org-admin can make this change.`,
    { param },
  );
}
