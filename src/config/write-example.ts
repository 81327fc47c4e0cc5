import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderExample } from './example.ts';

// `bun run config:example`: regenerates svc.toml.example at the repository root.
const target = join(import.meta.dir, '..', '..', 'svc.toml.example');
writeFileSync(target, renderExample());
console.log(`wrote ${target}`);
