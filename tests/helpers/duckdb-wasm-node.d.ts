// The package ships these types, but its "exports" map hides them from TypeScript for this entry point;
// these are the parts tests/helpers/duckdb-wasm.ts uses.
declare module '@duckdb/duckdb-wasm/dist/duckdb-node-blocking' {
  export interface DuckDBConnection {
    insertArrowFromIPCStream(buffer: Uint8Array, options: { name: string }): void;
    query(sql: string): { toArray(): { toJSON(): Record<string, unknown> }[] };
    close(): void;
  }
  export interface DuckDBBindings {
    instantiate(progress: () => void): Promise<unknown>;
    connect(): DuckDBConnection;
  }
  export class VoidLogger {}
  export const NODE_RUNTIME: unknown;
  export function createDuckDB(bundles: unknown, logger: VoidLogger, runtime: unknown): Promise<DuckDBBindings>;
}
