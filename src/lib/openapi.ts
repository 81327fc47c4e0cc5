/**
 * OpenAPI 3.1 documents generated from the zod schemas the routes check, for both ports. Each
 * service keeps a catalog of its operations; the document is built against the routes its Hono app
 * registered, and building fails when a route has no documentation or documentation names a route
 * that is not there, so the document cannot drift from the code.
 */
import { z } from 'zod';

/** One documented operation. */
export interface Operation {
  summary: string;
  body?: z.ZodType;
  /** Request body media type other than JSON (for example line protocol text); `body` then does not apply. */
  rawBody?: { mediaType: string; description: string };
  query?: z.ZodObject;
  /** Status -> description of the success answer. */
  ok: Record<number, string>;
  /** Answers without credentials. */
  public?: boolean;
  /** Routed only when a setting turns its feature on: left out of the document when not routed, instead of failing. */
  optional?: boolean;
}

/** A service's catalog: every operation keyed `METHOD path` with Hono's `:param` syntax. */
export type Operations = Readonly<Record<string, Operation>>;

/** What differs between the two services' documents. */
export interface DocumentInfo {
  title: string;
  version: string;
  description?: string;
  /** JSON schema of an error answer. */
  error: Record<string, unknown>;
  securitySchemes: Record<string, unknown>;
}

/** A route as Hono lists it (`app.routes`). */
export interface RegisteredRoute {
  method: string;
  path: string;
}

const jsonSchema = (s: z.ZodType) => {
  const { $schema: _s, ...rest } = z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
};

/** `METHOD path` of every real route: middleware (`use`, registered as ALL) and wildcard mounts are not operations. */
export function operationKeys(routes: readonly RegisteredRoute[]): Set<string> {
  const keys = new Set<string>();
  for (const r of routes) {
    if (r.path.endsWith('*') || r.method === 'ALL') continue;
    keys.add(`${r.method} ${r.path.length > 1 ? r.path.replace(/\/$/, '') : r.path}`);
  }
  return keys;
}

/**
 * The document for the routes an app registered. Throws when a route has no documentation or a
 * documented operation (not marked optional) is not routed.
 */
export function openApiDocument(info: DocumentInfo, operations: Operations, routes: readonly RegisteredRoute[]): Record<string, unknown> {
  const registered = operationKeys(routes);
  const undocumented = [...registered].filter((k) => !(k in operations));
  const stale = Object.keys(operations).filter((k) => !registered.has(k) && !operations[k]!.optional);
  if (undocumented.length || stale.length) throw new Error(`OpenAPI document out of step with the routes: undocumented ${undocumented.join(', ') || 'none'}; not routed ${stale.join(', ') || 'none'}`);

  const paths: Record<string, Record<string, unknown>> = {};
  for (const [key, op] of Object.entries(operations)) {
    if (!registered.has(key)) continue;
    const [method, path] = key.split(' ') as [string, string];
    const oaPath = path.replace(/:(\w+)/g, '{$1}');
    const parameters = [...path.matchAll(/:(\w+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    if (op.query) {
      const props = (jsonSchema(op.query).properties ?? {}) as Record<string, unknown>;
      for (const [name, schema] of Object.entries(props)) parameters.push({ name, in: 'query', required: false, schema: schema as { type: string } });
    }
    const responses: Record<string, unknown> = {};
    for (const [status, description] of Object.entries(op.ok)) responses[status] = { description };
    responses.default = { description: 'error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    const requestBody = op.rawBody
      ? { required: true, description: op.rawBody.description, content: { [op.rawBody.mediaType]: { schema: { type: 'string' } } } }
      : op.body
        ? { required: true, content: { 'application/json': { schema: jsonSchema(op.body) } } }
        : undefined;
    (paths[oaPath] ??= {})[method.toLowerCase()] = {
      summary: op.summary,
      ...(op.public ? { security: [] } : {}),
      ...(parameters.length ? { parameters } : {}),
      ...(requestBody ? { requestBody } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version, ...(info.description ? { description: info.description } : {}) },
    components: { securitySchemes: info.securitySchemes, schemas: { Error: info.error } },
    security: Object.keys(info.securitySchemes).map((name) => ({ [name]: [] })),
    paths,
  };
}
