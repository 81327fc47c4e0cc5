import type { Node, SerializedSql } from './tree.ts';
import type { MeasurementRef } from './references.ts';

/** Every COLUMN_REF's name parts (`[name]`, `[alias, name]`, ...) anywhere in a syntax tree. */
function columnRefs(tree: unknown, out: string[][] = []): string[][] {
  if (Array.isArray(tree)) for (const x of tree) columnRefs(x, out);
  else if (tree && typeof tree === 'object') {
    const n = tree as Node;
    if (n.class === 'COLUMN_REF' && Array.isArray(n.column_names)) out.push(n.column_names as string[]);
    for (const v of Object.values(n)) if (v && typeof v === 'object') columnRefs(v, out);
  }
  return out;
}

/**
 * Columns an empty stand-in for a measurement with no data must carry so the query still binds: the
 * names qualified with the reference's alias, and unqualified names when it is the only reference
 * (with several, an unqualified name may belong to another table and must not become ambiguous).
 */
export function columnsForEmpty(tree: SerializedSql, ref: MeasurementRef, refCount: number): string[] {
  const alias = String(ref.node.alias || ref.node.table_name);
  const names = new Set<string>();
  for (const parts of columnRefs(tree.statements)) {
    const name = parts[parts.length - 1]!;
    if (parts.length === 1 ? refCount === 1 : parts[parts.length - 2] === alias) names.add(name);
  }
  names.delete('time');
  return [...names];
}
