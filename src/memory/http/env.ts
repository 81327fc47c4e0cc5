import type { KeyPrincipal } from '../key-service.ts';

/** Hono environment of the memory service: the authenticated key is a typed context variable. */
export interface MemoryEnv {
  Variables: { principal: KeyPrincipal; apiKey: string };
}
