import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { TokenStore } from '../auth/token.store';
import { GatewayException } from '../core/errors/gateway.exception';
import { grantsEverywhere, grantsOn, PERMISSIONS, teamsGranted } from './permissions';
import type { Requirement } from './requires.decorator';
import { formatRole, type AdminActor } from './roles';

/**
 * Decides whether an admin call may go on, from its actor's roles and the route's requirement (permissions.ts):
 * 403 permission_denied otherwise. A route with no team to name (a list across teams) is let through when the
 * actor holds the permission on at least one team; its handler shows only those (visibleTeams).
 */
@Injectable()
export class AdminAccess {
  constructor(private readonly tokens: TokenStore) {}

  async check(actor: AdminActor, { permission, target }: Requirement, req: Request): Promise<void> {
    if (grantsEverywhere(actor.roles, permission)) return;
    const team = await this.teamOf(target, req);
    const allowed =
      team === undefined
        ? PERMISSIONS[permission].scope === 'team' && teamsGranted(actor.roles, permission).length > 0
        : grantsOn(actor.roles, permission, team);
    if (allowed) return;
    const roles = actor.roles.map(formatRole).join(', ') || 'none';
    throw new GatewayException(
      'permission_denied',
      `Your roles (${roles}) do not allow ${permission}${team === undefined ? '' : ` on team "${team}"`}.`,
    );
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
