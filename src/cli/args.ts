import { parseArgs } from 'node:util';

/** The subcommands of the `svc` executable. */
export const COMMANDS = ['serve', 'token', 'backup', 'import', 'query', 'export', 'write', 'completion', 'mcp', 'version', 'help'] as const;
export type Command = (typeof COMMANDS)[number];

/** A parsed command line: the subcommand, its positionals and its flags. */
export interface ParsedArgs {
  command: Command;
  positionals: string[];
  flags: Record<string, string | boolean | undefined>;
}

/** Parses argv (without the executable): `svc [command] [args] [--flags]`; no command means serve. */
export function parseCommandLine(argv: string[]): ParsedArgs {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      config: { type: 'string', short: 'c' },
      version: { type: 'boolean', short: 'v' },
      help: { type: 'boolean', short: 'h' },
      admin: { type: 'boolean' },
      name: { type: 'string' },
      description: { type: 'string' },
      url: { type: 'string' },
      token: { type: 'string' },
      yes: { type: 'boolean', short: 'y' },
      'no-data': { type: 'boolean' },
      'no-metadata': { type: 'boolean' },
      'with-config': { type: 'boolean' },
      measurement: { type: 'string', short: 'm' },
      db: { type: 'string' },
      format: { type: 'string' },
      'time-column': { type: 'string' },
      'time-format': { type: 'string' },
      delimiter: { type: 'string' },
      'skip-rows': { type: 'string' },
      precision: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      out: { type: 'string', short: 'o' },
      'memory-url': { type: 'string' },
    },
  });
  if (values.version) return { command: 'version', positionals: [], flags: values };
  if (values.help) return { command: 'help', positionals: [], flags: values };
  const [first, ...rest] = positionals;
  if (first === undefined) return { command: 'serve', positionals: [], flags: values };
  if (!(COMMANDS as readonly string[]).includes(first)) throw new Error(`unknown command '${first}' (commands: ${COMMANDS.join(', ')})`);
  return { command: first as Command, positionals: rest, flags: values };
}

/** Usage text for --help. */
export const USAGE = `usage: svc [command] [options]

commands:
  serve                 start the time-series (8000) and memory (9100) services (default)
  token create --name N [--admin] [--description D]
                        create a token in the local metadata database and print it
  backup create|list    back up a running server / list its backups (--url, --token or SVC_TOKEN)
  backup restore ID --yes [--no-data] [--no-metadata] [--with-config]
                        restore a backup into a running server, with a progress bar
  import FILE --measurement M [--db D] [--format csv|parquet|lp|tle] [--time-column C]
         [--time-format epoch_s|epoch_ms|epoch_us|epoch_ns] [--delimiter X] [--skip-rows N] [--precision P]
                        upload a file to a running server (--url, --token or SVC_TOKEN) with a progress bar;
                        the format is guessed from the extension (.csv .parquet .lp .txt .tle, also .gz)
  query [--db DB] [--format table|csv|json|arrow] "SQL"
                        run SQL on a running server (--url, --token or SVC_TOKEN); "-" reads the SQL from stdin;
                        a table by default with the row count and times
  export --db DB --measurement M [--from T] [--to T] --format parquet|csv --out FILE
                        save a measurement's rows in [from, to) (RFC 3339 or epoch ms) to a file
  write FILE [--db DB] [--measurement M] [--precision P]
                        send a line-protocol (.lp) or CSV file (CSV needs --measurement), with a progress bar
  completion bash|zsh   print a shell completion script (source <(svc completion bash))
  mcp [--memory-url URL]
                        an MCP server on stdin/stdout whose tools call a running memory service
                        (default http://127.0.0.1:9100; API key from SVC_MEMORY_KEY)
  version               print the version

options:
  -c, --config PATH     read this svc.toml instead of searching ./, /etc/svc/, ~/.svc/
  -v, --version         print the version
  -h, --help            show this help`;
