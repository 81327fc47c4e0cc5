/**
 * Parses a Prometheus text exposition (format 0.0.4) twice: with parse-prometheus-text-format (a port of
 * the Prometheus client parser) and with a strict line checker for the rules that parser lets through
 * (name syntax, one TYPE per family before its samples, contiguous families, numeric values, cumulative
 * histogram buckets ending in +Inf = _count). Throws on the first violation.
 */
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

/** One sample line: the full sample name (with _bucket/_sum/_count), its labels and value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A metric family: its type, help and every sample line. */
export interface Family {
  type: MetricType;
  help: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+(-?\d+))?$/;
const LABEL_PAIR = /\s*([^=\s]+)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(?:,|$)/y;

function parseValue(raw: string, line: string): number {
  if (raw === '+Inf') return Infinity;
  if (raw === '-Inf') return -Infinity;
  if (raw === 'NaN') return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(raw)) throw new Error(`invalid sample value '${raw}' in: ${line}`);
  return Number(raw);
}

function parseLabels(raw: string | undefined, line: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!raw) return out;
  LABEL_PAIR.lastIndex = 0;
  while (LABEL_PAIR.lastIndex < raw.length) {
    const m = LABEL_PAIR.exec(raw);
    if (!m) throw new Error(`invalid labels in: ${line}`);
    if (!LABEL.test(m[1]!)) throw new Error(`invalid label name '${m[1]}' in: ${line}`);
    if (m[1]! in out) throw new Error(`duplicate label '${m[1]}' in: ${line}`);
    out[m[1]!] = m[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
  }
  return out;
}

/** The family a sample belongs to: histogram and summary samples carry a suffix. */
function familyOf(sample: string, families: Map<string, Family>): string {
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!sample.endsWith(suffix)) continue;
    const base = sample.slice(0, -suffix.length);
    const f = families.get(base);
    if (f && (f.type === 'histogram' || (f.type === 'summary' && suffix !== '_bucket'))) return base;
  }
  return sample;
}

function checkHistogram(name: string, f: Family): void {
  const series = new Map<string, { buckets: [number, number][]; count?: number }>();
  for (const s of f.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const e = series.get(key) ?? { buckets: [] };
    series.set(key, e);
    if (s.name === `${name}_bucket`) {
      if (le === undefined) throw new Error(`${name}_bucket without le`);
      e.buckets.push([parseValue(le, `${name} le`), s.value]);
    } else if (s.name === `${name}_count`) e.count = s.value;
  }
  for (const [key, e] of series) {
    const last = e.buckets[e.buckets.length - 1];
    if (!last || last[0] !== Infinity) throw new Error(`${name}${key}: no le="+Inf" bucket`);
    for (let i = 1; i < e.buckets.length; i++)
      if (e.buckets[i]![0] <= e.buckets[i - 1]![0] || e.buckets[i]![1] < e.buckets[i - 1]![1])
        throw new Error(`${name}${key}: buckets not increasing and cumulative`);
    if (e.count !== last[1]) throw new Error(`${name}${key}: +Inf bucket ${last[1]} != _count ${e.count}`);
  }
}

/** Validates `text` strictly and returns its families by name. */
export function parseExposition(text: string): Map<string, Family> {
  if (!text.endsWith('\n')) throw new Error('exposition must end with a newline');
  const families = new Map<string, Family>();
  const closed = new Set<string>();
  let current: string | null = null;
  const enter = (name: string) => {
    if (current === name) return;
    if (current) closed.add(current);
    if (closed.has(name)) throw new Error(`family ${name} appears twice (families must be contiguous)`);
    current = name;
  };
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
    if (meta) {
      const [, kind, name, rest = ''] = meta;
      if (!NAME.test(name!)) throw new Error(`invalid metric name in: ${line}`);
      enter(name!);
      const f = families.get(name!) ?? { type: 'untyped' as MetricType, help: '', samples: [] };
      families.set(name!, f);
      if (kind === 'TYPE') {
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(rest)) throw new Error(`invalid type in: ${line}`);
        if (f.samples.length > 0) throw new Error(`TYPE after samples in: ${line}`);
        f.type = rest as MetricType;
      } else f.help = rest;
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`invalid sample line: ${line}`);
    const family = familyOf(m[1]!, families);
    enter(family);
    const f = families.get(family) ?? { type: 'untyped' as MetricType, help: '', samples: [] };
    families.set(family, f);
    f.samples.push({ name: m[1]!, labels: parseLabels(m[2], line), value: parseValue(m[3]!, line) });
  }
  for (const [name, f] of families) if (f.type === 'histogram') checkHistogram(name, f);

  // The reference parser must agree on every family and its type.
  const reference = parsePrometheusTextFormat(text) as { name: string; type: string }[];
  const refTypes = new Map(reference.map((r) => [r.name, r.type.toLowerCase()]));
  for (const [name, f] of families)
    if (refTypes.get(name) !== f.type) throw new Error(`reference parser reads ${name} as ${refTypes.get(name)}, not ${f.type}`);
  if (refTypes.size !== families.size) throw new Error(`reference parser found ${refTypes.size} families, strict check ${families.size}`);
  return families;
}

/** Sum of the samples named `sample` whose labels include `labels` (0 when none). */
export function sampleValue(families: Map<string, Family>, sample: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const f of families.values())
    for (const s of f.samples)
      if (s.name === sample && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) total += s.value;
  return total;
}
