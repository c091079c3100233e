import { SetMetadata } from '@nestjs/common';

export const ROUTE_ACCESS = 'switchyard:route-access';
export type RouteAccess = 'public' | 'admin' | 'team';

/** No credentials needed (health checks). Every other route requires one. */
export const Public = () => SetMetadata(ROUTE_ACCESS, 'public' satisfies RouteAccess);
/** Requires the admin key (`admin.apiKey`), not a team token. */
export const AdminOnly = () => SetMetadata(ROUTE_ACCESS, 'admin' satisfies RouteAccess);
