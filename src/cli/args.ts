import { parseArgs } from 'node:util';

/** The subcommands of the `svc` executable. */
export const COMMANDS = ['serve', 'token', 'version', 'help'] as const;
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
  version               print the version

options:
  -c, --config PATH     read this svc.toml instead of searching ./, /etc/svc/, ~/.svc/
  -v, --version         print the version
  -h, --help            show this help`;
