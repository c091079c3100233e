import type { SchemaObject } from './dto-schemas';

/** Who may call a route: a team token, the admin key, the metrics token (if set), or anyone. */
export type Access = 'team' | 'admin' | 'metrics' | 'public';

export interface Operation {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI form: /admin/v1/teams/{team} */
  path: string;
  access: Access;
  summary: string;
  /** A DTO class name: the JSON body, validated by it. */
  body?: string;
  /** A DTO class name: the query string, validated by it. */
  query?: string;
  /** The success status and what it returns. */
  ok: { status: number; description: string; schema?: SchemaObject; contentType?: string };
  /** Anthropic's API: errors in its shape, the token also accepted in x-api-key. Default: OpenAI's. */
  speaks?: 'anthropic';
}

export const object = (
  properties: Record<string, SchemaObject> = {},
  required: string[] = [],
): SchemaObject => ({
  type: 'object',
  properties,
  required,
});
export const list = (items: SchemaObject = { type: 'object' }): SchemaObject =>
  object({ object: { const: 'list' }, data: { type: 'array', items } }, ['object', 'data']);
export const ref = (name: string): SchemaObject => ({ $ref: `#/components/schemas/${name}` });
