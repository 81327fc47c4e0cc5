import { TokenService, TokenStore } from '../auth/index.ts';
import { migrations, openCatalog } from '../catalog/index.ts';
import type { Config } from '../config/index.ts';
import type { ParsedArgs } from './args.ts';

/** `svc token create --name X [--admin]`: for operators who lost the admin token; works on the local metadata file. */
export function runTokenCommand(args: ParsedArgs, config: Config): number {
  const [sub] = args.positionals;
  if (sub !== 'create') {
    process.stderr.write(`svc token: unknown subcommand '${sub ?? ''}' (use: svc token create --name NAME [--admin])\n`);
    return 2;
  }
  const name = args.flags.name;
  if (typeof name !== 'string' || name.trim() === '') {
    process.stderr.write('svc token create: --name NAME is required\n');
    return 2;
  }
  const db = openCatalog(config.auth.db_path, migrations);
  try {
    const tokens = new TokenService(new TokenStore(db), { cacheTtlSec: 0, maxCacheSize: 0 });
    const description = typeof args.flags.description === 'string' ? args.flags.description : 'created with svc token create';
    const { record, token } = tokens.create({ name, description, isAdmin: args.flags.admin === true });
    process.stdout.write(`${token}\n`);
    process.stderr.write(`created ${record.isAdmin ? 'admin ' : ''}token '${record.name}' (id ${record.id}); it is shown only now\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`svc token create: ${(err as Error).message}\n`);
    return 1;
  } finally {
    db.close();
  }
}
