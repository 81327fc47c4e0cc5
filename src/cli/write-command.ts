/**
 * `svc write FILE [--db DB] [--measurement M] [--precision P]`: line protocol (.lp, .line, .influx) or
 * CSV (.csv, .tsv; needs --measurement), compressed too, sent with a progress bar. The same upload as
 * `svc import`, for the two text formats people write by hand.
 */
import type { ParsedArgs } from './args.ts';
import { formatOf, runImportCommand } from './import-command.ts';

/** Runs `svc write ...`; resolves to the exit code. */
export async function runWriteCommand(args: ParsedArgs, env: Record<string, string | undefined> = process.env): Promise<number> {
  const [file] = args.positionals;
  const format = typeof args.flags.format === 'string' ? args.flags.format : file ? formatOf(file) : null;
  if (file && format !== 'lp' && format !== 'csv') {
    process.stderr.write(`svc write: ${file} is neither line protocol (.lp .line .influx) nor CSV (.csv .tsv): pass --format lp|csv, or use svc import for Parquet and TLE\n`);
    return 2;
  }
  return runImportCommand({ ...args, flags: { ...args.flags, format: format ?? undefined } }, env);
}
