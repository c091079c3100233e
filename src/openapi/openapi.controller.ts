import { Controller, Get } from '@nestjs/common';
import { DeclaredRoutes } from '../access/declared-routes';
import { Public } from '../auth/route-access.decorators';
import { buildOpenApiDocument } from './openapi.document';

/** GET /openapi.json: the OpenAPI 3.1 document of this gateway's HTTP API (public, like the vendors' own). */
@Public()
@Controller('openapi.json')
export class OpenApiController {
  private document?: Record<string, unknown>;

  constructor(private readonly adminRoutes: DeclaredRoutes) {}

  @Get()
  get(): Record<string, unknown> {
    return (this.document ??= buildOpenApiDocument(
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      (require('../../package.json') as { version: string }).version,
      this.adminRoutes.all(),
    ));
  }
}
