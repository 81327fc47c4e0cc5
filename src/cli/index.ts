export { parseCommandLine, USAGE, COMMANDS, type Command, type ParsedArgs } from './args.ts';
export { runTokenCommand } from './token-command.ts';
export { runBackupCommand } from './backup-command.ts';
export { runImportCommand } from './import-command.ts';
export { announceBootstrapToken, announceMemoryKey } from './announce.ts';
export { runMcpCommand } from './mcp-command.ts';
