import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

/** Every route Express serves, as `METHOD /path/{param}` (Nest registers its routes on Express' router). */
function servedRoutes(gw: TestGateway): string[] {
  const express = gw.gateway.app.getHttpAdapter().getInstance() as {
    router: { stack: Array<{ route?: { path: string; methods: Record<string, boolean> } }> };
  };
  const routes: string[] = [];
  for (const layer of express.router.stack) {
    if (!layer.route) continue;
    const path = layer.route.path.replace(/:(\w+)/g, '{$1}');
    for (const method of Object.keys(layer.route.methods)) routes.push(`${method.toUpperCase()} ${path}`);
  }
  // A route-scoped middleware (the usage recorder on the chat route) is a route layer of its own.
  return [...new Set(routes)].sort();
}

describe('GET /openapi.json', () => {
  let upstream: OpenAIUpstream;
  let gw: TestGateway;
  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    gw = await startTestGateway({ upstreamUrl: upstream.url });
  });
  afterAll(async () => {
    await gw.close();
    await upstream.stop();
  });

  it('is public, OpenAPI 3.1, and lists exactly the routes the gateway serves', async () => {
    const response = await fetch(`${gw.url}/openapi.json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as any;
    expect(document.openapi).toBe('3.1.0');
    const documented = Object.entries(document.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, operations]) =>
        Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
      )
      .sort();
    expect(documented).toEqual(servedRoutes(gw));
  });

  it("describes request bodies with the DTOs' own rules, and errors with OpenAI's error body", async () => {
    const document = (await (await fetch(`${gw.url}/openapi.json`)).json()) as any;
    const chat = document.components.schemas.ChatCompletionRequestDto;
    expect(chat.required).toEqual(['model', 'messages']);
    expect(chat.properties.temperature).toMatchObject({ type: 'number', minimum: 0, maximum: 2 });
    expect(chat.properties.messages).toMatchObject({ type: 'array', minItems: 1 });
    expect(document.components.schemas.LimitSettings.properties).toHaveProperty('concurrentRequests');
    expect(
      document.paths['/v1/chat/completions'].post.requestBody.content['application/json'].schema.$ref,
    ).toBe('#/components/schemas/ChatCompletionRequestDto');
    expect(document.paths['/admin/v1/audit'].get.parameters.map((p: any) => p.name)).toEqual([
      'limit',
      'before',
      'action',
      'target',
    ]);
    expect(document.components.schemas.Error.required).toEqual(['error']);
    // A team's ceiling: shown on the team, taken by create and update, with the limits' own rules.
    expect(document.components.schemas.Team.properties.ceiling.oneOf).toEqual([
      { $ref: '#/components/schemas/CeilingSettings' },
      { type: 'null' },
    ]);
    for (const dto of ['CreateTeamDto', 'UpdateTeamDto'])
      expect(document.components.schemas[dto].properties.ceiling.$ref).toBe(
        '#/components/schemas/CeilingSettings',
      );
    expect(document.components.schemas.CeilingSettings.properties).toMatchObject({
      models: { type: 'array', items: { type: 'string' } },
      limits: { $ref: '#/components/schemas/LimitSettings' },
    });
    // Every $ref points at a schema that exists.
    for (const [, name] of JSON.stringify(document).matchAll(/"\$ref":"#\/components\/schemas\/(\w+)"/g))
      expect(document.components.schemas).toHaveProperty(name);
  });
});
