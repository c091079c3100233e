import { Injectable, RequestMethod, type OnModuleInit } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { ROUTE_ACCESS, type RouteAccess } from '../auth/route-access.decorators';
import { REQUIRES, type Requirement } from './requires.decorator';

/** An admin route and what it requires: `GET /admin/v1/teams/{team}` (the OpenAPI form). */
export interface DeclaredRoute {
  route: string;
  requirement: Requirement;
}

/**
 * Every @AdminOnly route of the app with its @Requires, read from the controllers at start-up. A route that
 * forgets its permission stops the gateway from starting (rather than being open to every role, or to none);
 * so does @Requires on a route that is not an admin route (it would check nothing there). The OpenAPI document
 * shows each route's requirement (`x-permission`) from here.
 */
@Injectable()
export class DeclaredRoutes implements OnModuleInit {
  private routes: DeclaredRoute[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    const routes: DeclaredRoute[] = [];
    const undeclared: string[] = [];
    for (const wrapper of this.discovery.getControllers()) {
      const controller = wrapper.metatype as (new (...args: never[]) => unknown) | null;
      if (!controller) continue;
      const base = (Reflect.getMetadata(PATH_METADATA, controller) as string | undefined) ?? '';
      for (const name of this.scanner.getAllMethodNames(controller.prototype)) {
        const handler = (controller.prototype as Record<string, unknown>)[name] as () => unknown;
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (method === undefined) continue;
        const route = `${RequestMethod[method]} ${routePath(base, Reflect.getMetadata(PATH_METADATA, handler) as string)}`;
        const access = this.reflector.getAllAndOverride<RouteAccess | undefined>(ROUTE_ACCESS, [
          handler,
          controller,
        ]);
        const requirement = this.reflector.get<Requirement | undefined>(REQUIRES, handler);
        if ((access === 'admin') !== (requirement !== undefined)) undeclared.push(route);
        else if (requirement) routes.push({ route, requirement });
      }
    }
    if (undeclared.length > 0)
      throw new Error(
        `Every admin route needs @Requires(<permission>) and only admin routes take it (src/access/permissions.ts): ${undeclared.join(', ')}`,
      );
    this.routes = routes;
  }

  all(): readonly DeclaredRoute[] {
    return this.routes;
  }
}

/** `admin/v1/teams` + `:team/tokens` -> `/admin/v1/teams/{team}/tokens` */
function routePath(base: string, path: string | undefined): string {
  const joined = `/${[base, path ?? ''].filter((part) => part && part !== '/').join('/')}`.replace(
    /\/+/g,
    '/',
  );
  return joined.replace(/:(\w+)/g, '{$1}').replace(/(.)\/$/, '$1');
}
