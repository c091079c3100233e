import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { TokenStore } from '../auth/token.store';
import { GatewayException } from '../core/errors/gateway.exception';
import { TeamStore } from '../teams/team.store';
import {
  grantsEverywhere,
  grantsOn,
  memberSwitchOf,
  PERMISSIONS,
  teamsGranted,
  type Permission,
  type TeamSwitches,
} from './permissions';
import type { Requirement } from './requires.decorator';
import { formatRole, type AdminActor } from './roles';

/**
 * Decides whether an admin call may go on, from its actor's roles and the route's requirement (permissions.ts):
 * 403 permission_denied otherwise. A route with no team to name (a list across teams) is let through when the
 * actor holds the permission on at least one team; its handler shows only those (visibleTeams). A grant that waits
 * on a team's setting (a team-member's `tokens:own`, permissions.ts) is decided by the team's record as it is now.
 */
@Injectable()
export class AdminAccess {
  constructor(
    private readonly tokens: TokenStore,
    private readonly teams: TeamStore,
  ) {}

  async check(actor: AdminActor, { permission, target }: Requirement, req: Request): Promise<void> {
    if (grantsEverywhere(actor.roles, permission)) return;
    const team = await this.teamOf(target, req);
    const allowed =
      team === undefined
        ? PERMISSIONS[permission].scope === 'team' && teamsGranted(actor.roles, permission).length > 0
        : grantsOn(actor.roles, permission, team, await this.switchesOf(permission, team));
    if (allowed) return;
    const roles = actor.roles.map(formatRole).join(', ') || 'none';
    throw new GatewayException(
      'permission_denied',
      `Your roles (${roles}) do not allow ${permission}${team === undefined ? '' : ` on team "${team}"`}.`,
    );
  }

  /**
   * The teams the actor's team roles name where those roles hold `permission`, each team's settings read for a
   * grant that waits on one (org roles aside: they hold a team permission on every team).
   */
  async teamsOfTeamRoles(actor: AdminActor, permission: Permission): Promise<string[]> {
    const teamRoles = actor.roles.filter((role) => 'team' in role);
    const teams = [...new Set(teamRoles.map((role) => ('team' in role ? role.team : '')))];
    const switches = new Map<string, TeamSwitches>();
    for (const team of teams) switches.set(team, await this.switchesOf(permission, team));
    const granted = teamsGranted(teamRoles, permission, (team) => switches.get(team) ?? {});
    return granted === 'all' ? teams.sort() : granted;
  }

  /** The team's settings when `permission` waits on one (else none are read): a missing team has none on. */
  private async switchesOf(permission: Permission, team: string): Promise<TeamSwitches> {
    const needed = memberSwitchOf(permission);
    if (needed === undefined) return {};
    return { [needed]: (await this.teams.get(team))?.[needed] === true };
  }

  private async teamOf(target: Requirement['target'], req: Request): Promise<string | undefined> {
    if (target.team) return String(req.params[target.team]);
    if (target.token) return (await this.tokens.require(String(req.params[target.token]))).team;
    const named = target.teamQuery ? (req.query as Record<string, unknown>)[target.teamQuery] : undefined;
    return typeof named === 'string' ? named : undefined;
  }
}

/** The teams a list route shows its caller: every team, or those where the actor holds the permission. */
export function visibleTeams(req: Request, permission: Requirement['permission']): 'all' | string[] {
  return req.adminActor ? teamsGranted(req.adminActor.roles, permission) : [];
}
