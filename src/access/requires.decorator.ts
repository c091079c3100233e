import { SetMetadata } from '@nestjs/common';
import type { Permission } from './permissions';

export const REQUIRES = 'switchyard:requires';

/**
 * Where a route's team is: a route param (`team`), a query param (`teamQuery`: when the query names no team the
 * route lists what the caller may see), or a route param holding a token id (`token`: the token's team). None:
 * an org permission, or a team permission on a route that lists across teams (the handler keeps the caller's).
 */
export interface TeamTarget {
  team?: string;
  teamQuery?: string;
  token?: string;
}

export interface Requirement {
  permission: Permission;
  target: TeamTarget;
}

/**
 * The permission an admin route needs (table: permissions.ts), and where its team is. Every @AdminOnly route
 * must have one: the gateway refuses to start otherwise (declared-routes.ts).
 */
export const Requires = (permission: Permission, target: TeamTarget = {}) =>
  SetMetadata(REQUIRES, { permission, target } satisfies Requirement);
