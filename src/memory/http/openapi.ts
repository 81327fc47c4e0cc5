/**
 * The OpenAPI 3.1 document of the memory API, served at `GET /openapi.json`: the catalog of its
 * operations with the zod schemas the routes check, built by lib/openapi.ts against the app's
 * registered routes (a route added without documentation, or documentation of a route that is gone,
 * fails loudly instead of drifting).
 */
import { z } from 'zod';
import { openApiDocument as buildDocument, type Operations, type RegisteredRoute } from '../../lib/openapi.ts';
import { agentCreateSchema, contextSchema, forgetSchema, keyCreateSchema, listQuerySchema, memoryBatchSchema, memoryInputSchema, memoryPatchSchema, searchSchema, sessionCreateSchema, sessionListSchema, sessionUpdateSchema } from './schemas.ts';

/** Every operation, keyed `METHOD path` with Hono's `:param` syntax. */
export const OPERATIONS: Operations = {
  'GET /health': { summary: 'Liveness: {status, service, uptime}', ok: { 200: 'alive' }, public: true },
  'GET /ready': { summary: 'Readiness: {status, svc} (503 when the time-series service is unreachable)', ok: { 200: 'ready' }, public: true },
  'GET /openapi.json': { summary: 'This document', ok: { 200: 'the OpenAPI 3.1 document' }, public: true },
  'POST /api/v1/memories': { summary: 'Create one memory, or a batch `{memories: [...]}`', body: z.union([memoryInputSchema, memoryBatchSchema]), ok: { 201: 'the memory; for a batch {memories, duplicates, count}' } },
  'GET /api/v1/memories': { summary: 'List memories by filters', query: listQuerySchema, ok: { 200: '{memories, count, has_more}' } },
  'POST /api/v1/memories/forget': { summary: 'Forget (or with purge, erase) every memory matching a filter', body: forgetSchema, ok: { 200: '{forgotten, purged}' } },
  'GET /api/v1/memories/:id': { summary: 'One memory (404 when unknown, forgotten or expired)', ok: { 200: 'the memory' } },
  'PATCH /api/v1/memories/:id': { summary: 'Change a memory: writes and returns its next version', body: memoryPatchSchema, ok: { 200: 'the new version' } },
  'GET /api/v1/memories/:id/history': { summary: 'Every version of a memory, oldest first', ok: { 200: '{memory_id, versions, count}' } },
  'DELETE /api/v1/memories/:id': { summary: 'Forget a memory; with ?purge=true erase it from storage', query: z.object({ purge: z.enum(['true', 'false']).optional() }), ok: { 204: 'forgotten or purged' } },
  'POST /api/v1/search': { summary: 'Search: structured filters, optional full-text query ranked by relevance, recency and importance', body: searchSchema, ok: { 200: '{results, count, query_time_ms}' } },
  'POST /api/v1/agents': { summary: 'Register an agent', body: agentCreateSchema, ok: { 201: 'the agent' } },
  'GET /api/v1/agents': { summary: 'List agents', ok: { 200: '{agents, count}' } },
  'GET /api/v1/agents/:id': { summary: 'One agent', ok: { 200: 'the agent with updated_at' } },
  'GET /api/v1/agents/:id/stats': { summary: 'Live statistics of any agent_id with memories, registered or not', ok: { 200: 'the statistics record' } },
  'DELETE /api/v1/agents/:id': { summary: 'Remove an agent registration (memories stay)', ok: { 204: 'deleted' } },
  'POST /api/v1/sessions': { summary: 'Start a session', body: sessionCreateSchema, ok: { 201: 'the session' } },
  'GET /api/v1/sessions': { summary: 'List sessions', query: sessionListSchema, ok: { 200: '{sessions, count}' } },
  'GET /api/v1/sessions/:id': { summary: 'One session', ok: { 200: 'the session' } },
  'PUT /api/v1/sessions/:id': { summary: 'Close a session and/or replace its metadata', body: sessionUpdateSchema, ok: { 200: 'the session' } },
  'POST /api/v1/sessions/:id/context': { summary: 'Markdown context of a session', body: contextSchema, ok: { 200: '{session_id, context, memory_count, estimated_tokens, truncated}' } },
  'POST /api/v1/keys': { summary: 'Create an API key (admin); the key is shown once', body: keyCreateSchema, ok: { 201: 'the key record with key' } },
  'GET /api/v1/keys': { summary: 'List API keys (admin)', ok: { 200: '{keys, count}' } },
  'DELETE /api/v1/keys/:id': { summary: 'Revoke an API key (admin)', ok: { 204: 'revoked' } },
  'POST /mcp': { summary: 'Model Context Protocol, Streamable HTTP (JSON-RPC; stateless)', ok: { 200: 'JSON-RPC response' } },
  'GET /mcp': { summary: 'Model Context Protocol server-sent stream: 405, the server is stateless', ok: { 405: 'always' } },
  'DELETE /mcp': { summary: 'Model Context Protocol session end: 405, the server is stateless', ok: { 405: 'always' } },
};

const INFO = {
  title: 'svc agent memory service',
  version: '2.0.0',
  error: { type: 'object', required: ['error', 'message'], properties: { error: { type: 'string' }, message: { type: 'string' } } },
  securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' }, bearer: { type: 'http', scheme: 'bearer' } },
};

/**
 * The document for the routes the app registered (`METHOD path` pairs). Throws when a route has no
 * documentation or documentation names a route that does not exist.
 */
export function openApiDocument(routes: readonly RegisteredRoute[]): Record<string, unknown> {
  return buildDocument(INFO, OPERATIONS, routes);
}
