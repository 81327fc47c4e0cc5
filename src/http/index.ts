export { createApp, type AppDeps } from './app.ts';
export { listen, type ListenOptions } from './server.ts';
export type { AppEnv } from './context.ts';
export { readJson, readQuery, readBytes } from './body.ts';
export { requireAdmin, requirePermission, isPublicRoute } from './middleware/auth.ts';
export { limitBody } from './middleware/body-limit.ts';
export { tokenView } from './routes/auth-routes.ts';
