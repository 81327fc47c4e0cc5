/**
 * MQTT payload -> ColumnBatches. JSON or MessagePack is detected from the first byte; a message is one
 * point, an array of points, `{batch: [...]}`, or a columnar map `{m, columns}`. A point is
 * `{measurement|m, time|t|timestamp, tags, fields}` or flat: numbers and booleans become fields,
 * strings become tags. A message decodes whole or not at all, so a bad point never half-writes.
 */
import { columnNameProblem, measurementNameProblem } from '../../lib/names.ts';
import type { ColumnBatch } from '../../ingest/index.ts';
import { BatchAssembler, type FieldValue } from './batch-assembler.ts';
import { decodeMsgpack } from './msgpack-value.ts';
import { timeToMicros } from './time-units.ts';
import type { TopicTarget } from './topic-router.ts';

/** Payload encodings told apart by the first byte. */
export type PayloadFormat = 'json' | 'msgpack';

type Obj = { [key: string]: unknown };

const MEASUREMENT_KEYS = ['measurement', 'm'];
const TIME_KEYS = ['time', 't', 'timestamp'];
const RESERVED = new Set([...MEASUREMENT_KEYS, ...TIME_KEYS]);

/**
 * `{`, `[` or whitespace open a JSON text; a MessagePack point or array starts with a map or array
 * type byte (0x80-0x9f, 0xdc-0xdf), never one of those.
 */
export function detectFormat(bytes: Uint8Array): PayloadFormat {
  const b = bytes[0];
  return b === 0x7b || b === 0x5b || b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09 || b === 0xef ? 'json' : 'msgpack';
}

/** Decodes the payload bytes into a plain value; throws with a message naming the format. */
export function decodePayload(bytes: Uint8Array): unknown {
  if (bytes.length === 0) throw new Error('empty message');
  if (detectFormat(bytes) === 'json') {
    try {
      return JSON.parse(new TextDecoder().decode(bytes));
    } catch (err) {
      throw new Error(`invalid JSON: ${(err as Error).message}`);
    }
  }
  try {
    return decodeMsgpack(bytes);
  } catch (err) {
    throw new Error(`invalid MessagePack: ${(err as Error).message}`);
  }
}

/** Decodes one message for `target` at receive time `nowMicros`; throws "..." naming the bad point or column. */
export function decodeMessage(bytes: Uint8Array, target: TopicTarget, nowMicros: number): ColumnBatch[] {
  const value = decodePayload(bytes);
  const asm = new BatchAssembler();
  const items = Array.isArray(value) ? value : isObj(value) && Array.isArray(value.batch) && Object.keys(value).length === 1 ? value.batch : [value];
  if (items.length === 0) throw new Error('message holds no points');
  items.forEach((item, i) => {
    try {
      if (!isObj(item)) throw new Error(`expected an object, got ${describe(item)}`);
      if (isObj(item.columns)) addColumnar(asm, item, target, nowMicros);
      else addPoint(asm, item, target, nowMicros);
    } catch (err) {
      throw new Error(items.length > 1 || Array.isArray(value) ? `point ${i}: ${(err as Error).message}` : (err as Error).message);
    }
  });
  return asm.finish();
}

function addPoint(asm: BatchAssembler, p: Obj, target: TopicTarget, now: number): void {
  asm.begin(measurementOf(p, target), timeOf(p, now));
  for (const [k, v] of target.tags) asm.tag(k, v);
  let fields = 0;
  if (isObj(p.fields) || isObj(p.tags)) {
    // Row form: tags and fields are explicit; other keys besides measurement and time are not allowed.
    for (const key of Object.keys(p)) if (!RESERVED.has(key) && key !== 'tags' && key !== 'fields') throw new Error(`unexpected key '${key}' beside tags and fields`);
    if (p.tags !== undefined && !isObj(p.tags)) throw new Error(`tags must be an object, got ${describe(p.tags)}`);
    if (p.fields !== undefined && !isObj(p.fields)) throw new Error(`fields must be an object, got ${describe(p.fields)}`);
    for (const [k, v] of Object.entries((p.tags as Obj | undefined) ?? {})) {
      if (v === null || v === undefined) continue;
      if (typeof v === 'object') throw new Error(`tag '${k}' must be a string, got ${describe(v)}`);
      asm.tag(columnName(k), String(v));
    }
    for (const [k, v] of Object.entries((p.fields as Obj | undefined) ?? {})) {
      const f = fieldValue(k, v);
      if (f !== null) (asm.field(columnName(k), f), fields++);
    }
  } else {
    for (const k in p) {
      if (RESERVED.has(k)) continue;
      const v = p[k];
      if (typeof v === 'string') asm.tag(columnName(k), v);
      else {
        const f = fieldValue(k, v);
        if (f !== null) (asm.field(columnName(k), f), fields++);
      }
    }
  }
  if (fields === 0) throw new Error('point has no fields (numbers or booleans; in the flat form strings are tags)');
}

function addColumnar(asm: BatchAssembler, p: Obj, target: TopicTarget, now: number): void {
  const measurement = measurementOf(p, target);
  const cols = Object.entries(p.columns as Obj);
  let length = -1;
  for (const [k, v] of cols) {
    if (!Array.isArray(v)) throw new Error(`column '${k}' must be an array, got ${describe(v)}`);
    if (length >= 0 && v.length !== length) throw new Error(`column '${k}' has ${v.length} values, others have ${length}`);
    length = v.length;
  }
  if (length <= 0) throw new Error('columnar message has no rows');
  const times = (p.columns as Obj).time as unknown[] | undefined;
  for (let row = 0; row < length; row++) {
    asm.begin(measurement, times ? timeToMicros(times[row], now) : now);
    for (const [k, v] of target.tags) asm.tag(k, v);
    let fields = 0;
    for (const [k, values] of cols) {
      if (k === 'time') continue;
      const v = (values as unknown[])[row];
      if (typeof v === 'string') asm.tag(columnName(k), v);
      else {
        const f = fieldValue(k, v);
        if (f !== null) (asm.field(columnName(k), f), fields++);
      }
    }
    if (fields === 0) throw new Error(`row ${row} has no fields`);
  }
}

function measurementOf(p: Obj, target: TopicTarget): string {
  const named = p.measurement ?? p.m;
  if (named === undefined || named === null) {
    if (target.measurement === null) throw new Error('no measurement: the point names none and the topic has no usable last level');
    return target.measurement;
  }
  if (typeof named !== 'string') throw new Error(`measurement must be a string, got ${describe(named)}`);
  const problem = measurementNameProblem(named);
  if (problem) throw new Error(problem);
  return named;
}

function timeOf(p: Obj, now: number): number {
  for (const key of TIME_KEYS) if (p[key] !== undefined && p[key] !== null) return timeToMicros(p[key], now);
  return now;
}

function fieldValue(name: string, v: unknown): FieldValue | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Error(`field '${name}' is not a finite number`);
    return v;
  }
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'boolean' || typeof v === 'string') return v;
  throw new Error(`field '${name}' must be a number, boolean or string, got ${describe(v)}`);
}

// Devices repeat the same few keys in every point: remember names already checked.
const goodNames = new Set<string>();

function columnName(name: string): string {
  if (goodNames.has(name)) return name;
  const problem = name.toLowerCase() === 'time' ? `'${name}' is reserved for the timestamp` : columnNameProblem(name);
  if (problem) throw new Error(problem);
  if (goodNames.size >= 10_000) goodNames.clear();
  goodNames.add(name);
  return name;
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (v instanceof Uint8Array) return 'binary data';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}
