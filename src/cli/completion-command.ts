/**
 * `svc completion bash|zsh`: prints a completion script for the shell. Install with
 * `source <(svc completion bash)` or `svc completion zsh > "${fpath[1]}/_svc"`.
 */
import type { ParsedArgs } from './args.ts';
import { COMMANDS } from './args.ts';

/** Flags offered after each command (global ones everywhere). */
export const COMMAND_FLAGS: Record<string, string[]> = {
  serve: ['--config'],
  token: ['--name', '--admin', '--description', '--config'],
  backup: ['--url', '--token', '--yes', '--no-data', '--no-metadata', '--with-config'],
  import: ['--url', '--token', '--db', '--measurement', '--format', '--time-column', '--time-format', '--delimiter', '--skip-rows', '--precision'],
  query: ['--url', '--token', '--db', '--format'],
  export: ['--url', '--token', '--db', '--measurement', '--from', '--to', '--format', '--out'],
  write: ['--url', '--token', '--db', '--measurement', '--format', '--precision'],
  completion: [],
  version: [],
  help: [],
};

/** Values offered after a flag, per command. */
const FORMAT_VALUES: Record<string, string> = { query: 'table csv json arrow', export: 'parquet csv', import: 'csv parquet lp tle', write: 'lp csv' };

/** The bash script. */
export function bashCompletion(): string {
  const cases = Object.entries(COMMAND_FLAGS).map(([cmd, flags]) => `    ${cmd}) flags="${[...flags, '--help'].join(' ')}" ;;`).join('\n');
  const formats = Object.entries(FORMAT_VALUES).map(([cmd, v]) => `    ${cmd}) formats="${v}" ;;`).join('\n');
  return `# bash completion for svc: source <(svc completion bash)
_svc() {
  local cur prev cmd flags formats
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  cmd="\${COMP_WORDS[1]}"
  if [[ \${COMP_CWORD} -eq 1 ]]; then
    COMPREPLY=( $(compgen -W "${COMMANDS.filter((c) => c !== 'help').join(' ')} completion --help --version" -- "\${cur}") )
    return
  fi
  case "\${cmd}" in
${cases}
    *) flags="" ;;
  esac
  case "\${cmd}" in
${formats}
    *) formats="" ;;
  esac
  case "\${prev}" in
    --format) COMPREPLY=( $(compgen -W "\${formats}" -- "\${cur}") ); return ;;
    --out|--config|-c) COMPREPLY=( $(compgen -f -- "\${cur}") ); return ;;
    --url|--token|--db|--measurement|--from|--to|--name|--description|--time-column|--time-format|--delimiter|--skip-rows|--precision) return ;;
  esac
  if [[ "\${cmd}" == completion ]]; then
    COMPREPLY=( $(compgen -W "bash zsh" -- "\${cur}") ); return
  fi
  if [[ "\${cur}" == -* ]]; then
    COMPREPLY=( $(compgen -W "\${flags}" -- "\${cur}") )
  else
    COMPREPLY=( $(compgen -f -- "\${cur}") )
  fi
}
complete -o filenames -F _svc svc
`;
}

/** The zsh script (a #compdef function). */
export function zshCompletion(): string {
  const commands = COMMANDS.filter((c) => c !== 'help').map((c) => `'${c}'`).join(' ');
  const cases = Object.entries(COMMAND_FLAGS).map(([cmd, flags]) => {
    const specs = flags.map((f) => {
      if (f === '--format') return `'--format[output or input format]:format:(${FORMAT_VALUES[cmd] ?? ''})'`;
      if (f === '--out' || f === '--config') return `'${f}[file]:file:_files'`;
      if (['--admin', '--yes', '--no-data', '--no-metadata', '--with-config'].includes(f)) return `'${f}'`;
      return `'${f}[value]:value:'`;
    });
    const positional = cmd === 'completion' ? `'1:shell:(bash zsh)'` : ['import', 'write'].includes(cmd) ? `'1:file:_files'` : '';
    return `    ${cmd}) _arguments ${[...specs, positional].filter(Boolean).join(' ')} ;;`;
  });
  return `#compdef svc
# zsh completion for svc: svc completion zsh > "\${fpath[1]}/_svc"
_svc() {
  if (( CURRENT == 2 )); then
    compadd -- ${commands.replaceAll("'", '')}
    return
  fi
  local cmd=\${words[2]}
  shift words
  (( CURRENT-- ))
  case \$cmd in
${cases.join('\n')}
  esac
}
_svc "\$@"
`;
}

/** Runs `svc completion bash|zsh`. */
export function runCompletionCommand(args: ParsedArgs): number {
  const [shell] = args.positionals;
  if (shell === 'bash') process.stdout.write(bashCompletion());
  else if (shell === 'zsh') process.stdout.write(zshCompletion());
  else {
    process.stderr.write(`svc completion: name a shell: svc completion bash|zsh\n`);
    return 2;
  }
  return 0;
}
