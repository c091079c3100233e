import { GatewayException } from '../core/errors/gateway.exception';
import { limitsOutside, modelsOutside } from '../teams/team-ceiling';
import type { Team, TeamChanges } from '../teams/team.store';

/**
 * What a team-admin may change of their team (`teams:adjust`, access/permissions.ts): its models and limits,
 * anywhere within the ceiling an org-admin set (teams/team-ceiling.ts), widening back up to it as well as
 * narrowing. A part the ceiling leaves out (or no ceiling at all) is bounded by the team's current value: models
 * only narrowed, limits only lowered or added. Models: each name or glob must be matched by a bound glob (a glob is
 * tested as written, so `gpt-*` under `gpt-6-*` is refused: it names more). Limits: each the bound has stays set,
 * at or below it; others are free. The ceiling, labels, the disabled flag and the MCP permissions (which tool
 * servers the team reaches, with the gateway's credentials: docs/mcp.md) are the organisation's. Anything else
 * is 403 permission_denied naming the field; an org-admin can make it.
 *
 * TeamStore.update runs this against the team as read and writes only if the team's models, limits and ceiling
 * are still as read, so a ceiling lowered meanwhile is the one the change is checked against.
 */
export function assertWithinTeamAdminBound(team: Team, changes: TeamChanges): void {
  for (const field of ['ceiling', 'metadata', 'disabled', 'mcp'] as const)
    if (changes[field] !== undefined) refuse(field, `a team-admin cannot change a team's ${field}`);
  const models = team.ceiling?.models ?? team.models;
  const modelsBound = team.ceiling?.models ? "the team's ceiling" : "the team's current models";
  if (changes.models) {
    const outside = modelsOutside(models, changes.models);
    if (outside.length > 0)
      refuse('models', `${list(outside)} is not within ${modelsBound} (${list(models)})`);
  }
  const limits = team.ceiling?.limits ?? team.limits;
  const limitsBound = team.ceiling?.limits ? "the team's ceiling" : "the team's current limits";
  if (changes.limits === null && Object.keys(limits).length > 0)
    refuse('limits', `removing every limit goes above ${limitsBound}`);
  const named = Object.entries(changes.limits ?? {}).filter(([, value]) => value !== undefined);
  const asked = Object.fromEntries(named.map(([name, value]) => [name, value ?? undefined]));
  for (const { name, value, bound } of limitsOutside(limits, asked))
    if (named.some(([given]) => given === name))
      refuse(
        `limits.${name}`,
        value === undefined
          ? `removing ${name} goes above ${limitsBound} (${bound})`
          : `${value} is above ${limitsBound} (${bound})`,
      );
}

const list = (models: string[]) => models.map((m) => `\`${m}\``).join(', ');

function refuse(param: string, why: string): never {
  throw new GatewayException(
    'permission_denied',
    `A team-admin may set their team's models and limits only within its ceiling: ${why}; an org-admin can make this change.`,
    { param },
  );
}
