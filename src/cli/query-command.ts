/**
 * `svc query [--url URL] [--token T | SVC_TOKEN] [--db DB] [--format table|csv|json|arrow] "SQL"`
 * (`-` reads the SQL from stdin): a readable table by default with a row count and times; CSV, the
 * server's JSON, or the Arrow IPC stream as bytes. Exit codes: 0 answered, 1 the server refused or
 * failed (its message on stderr), 2 usage.
 */
import type { ParsedArgs } from './args.ts';
import { renderCsv, renderTable, footer, type JsonResult } from './result-text.ts';
import { postJson, serverError, serverTarget } from './server-target.ts';

const USAGE = 'usage: svc query [--url URL] [--token T] [--db DB] [--format table|csv|json|arrow] "SQL" (or - to read stdin)';
const FORMATS = ['table', 'csv', 'json', 'arrow'] as const;
type Format = (typeof FORMATS)[number];

function fail(message: string, code = 1): number {
  process.stderr.write(`svc query: ${message}\n`);
  return code;
}

/** Runs `svc query ...`; resolves to the exit code. */
export async function runQueryCommand(args: ParsedArgs, env: Record<string, string | undefined> = process.env, stdin: () => Promise<string> = () => Bun.stdin.text()): Promise<number> {
  const [arg, extra] = args.positionals;
  if (arg === undefined || extra !== undefined) return fail(`exactly one SQL argument is required (quote it)\n${USAGE}`, 2);
  const flag = args.flags.format ?? 'table';
  if (typeof flag !== 'string' || !(FORMATS as readonly string[]).includes(flag)) return fail(`unknown format '${String(flag)}' (use ${FORMATS.join(', ')})`, 2);
  const format = flag as Format;
  const sql = (arg === '-' ? await stdin() : arg).trim();
  if (!sql) return fail(`the SQL is empty\n${USAGE}`, 2);
  const target = serverTarget(args, env);
  const started = performance.now();
  try {
    const res = await postJson(target, format === 'arrow' ? '/api/v1/query/arrow' : '/api/v1/query', { sql });
    if (!res.ok) return fail(await serverError(res));
    if (format === 'arrow') {
      // Bytes as they arrive: an Arrow stream can be piped into another tool without being held here.
      const out = Bun.stdout.writer();
      for await (const chunk of res.body ?? []) out.write(chunk);
      await out.end();
      return 0;
    }
    const body = await res.text();
    if (format === 'json') {
      process.stdout.write(body.endsWith('\n') ? body : body + '\n');
      return 0;
    }
    const result = JSON.parse(body) as JsonResult;
    if (format === 'csv') process.stdout.write(renderCsv(result));
    else {
      process.stdout.write(renderTable(result));
      process.stdout.write(footer(result, performance.now() - started));
    }
    return 0;
  } catch (err) {
    return fail((err as Error).message);
  }
}
