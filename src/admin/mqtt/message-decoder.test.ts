import { describe, expect, test } from 'bun:test';
import { pack } from 'msgpackr';
import type { ColumnBatch } from '../../ingest/index.ts';
import { decodeMessage, detectFormat } from './message-decoder.ts';
import { TopicRouter } from './topic-router.ts';

const NOW = 1_700_000_000_000_000;
const target = (topic = 'sensors/room1/temperature', mapping = {}) => new TopicRouter(mapping).resolve(topic);
const json = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
const col = (b: ColumnBatch, name: string) => b.columns.get(name)!;

describe('message decoder', () => {
  test('flat JSON point: numbers and booleans are fields, strings tags, measurement from the last topic level', () => {
    const [b] = decodeMessage(json({ time: 1706745600000, value: 23.5, ok: true, device: 'a1' }), target(), NOW);
    expect(b!.measurement).toBe('temperature');
    expect(b!.length).toBe(1);
    expect(b!.time[0]).toBe(1706745600000 * 1000);
    expect(col(b!, 'value')).toMatchObject({ type: 'float64', tag: false });
    expect(col(b!, 'ok')).toMatchObject({ type: 'bool' });
    expect(col(b!, 'device')).toMatchObject({ type: 'string', tag: true, values: ['a1'] });
  });

  test('row form with m, t, tags and fields; string fields stay fields', () => {
    const [b] = decodeMessage(json({ m: 'cpu', t: 1706745600, tags: { host: 'h1', n: 3 }, fields: { usage: 0.5, state: 'idle' } }), target(), NOW);
    expect(b!.measurement).toBe('cpu');
    expect(b!.time[0]).toBe(1706745600 * 1e6);
    expect(col(b!, 'host')).toMatchObject({ tag: true, values: ['h1'] });
    expect(col(b!, 'n')).toMatchObject({ tag: true, values: ['3'] });
    expect(col(b!, 'state')).toMatchObject({ type: 'string', tag: false, values: ['idle'] });
  });

  test('time units by magnitude, RFC 3339 strings, missing time = now', () => {
    const times = [1706745600, 1706745600123, 1706745600123456, 1706745600123456789n, '2024-02-01T00:00:00.123456Z', undefined];
    const points = times.map((t, i) => (t === undefined ? { v: i } : { time: t, v: i }));
    const bytes = pack(points); // MessagePack keeps the nanosecond BigInt exact
    const [b] = decodeMessage(bytes, target(), NOW);
    expect([...b!.time]).toEqual([1706745600000000, 1706745600123000, 1706745600123456, 1706745600123456, 1706745600123456, NOW]);
  });

  test('array of points over several measurements gives one batch each, missing fields are NULL', () => {
    const batches = decodeMessage(json([{ m: 'a', x: 1 }, { m: 'b', y: 2 }, { m: 'a', z: 3 }]), target(), NOW);
    expect(batches.map((b) => [b.measurement, b.length])).toEqual([['a', 2], ['b', 1]]);
    const x = col(batches[0]!, 'x');
    expect(x.type === 'float64' && x.valid).toEqual(new Uint8Array([1, 0]));
  });

  test('MessagePack detected and decoded like JSON; columnar {m, columns} accepted', () => {
    expect(detectFormat(pack({ a: 1 }))).toBe('msgpack');
    expect(detectFormat(json({ a: 1 }))).toBe('json');
    const [b] = decodeMessage(pack({ m: 'm1', columns: { time: [1706745600000, 1706745601000], v: [1, 2.5], host: ['x', 'y'] } }), target(), NOW);
    expect(b!.length).toBe(2);
    expect(col(b!, 'host')).toMatchObject({ tag: true, values: ['x', 'y'] });
  });

  test('topic_mapping: exact or wildcard rule, tags from topic levels, rule database', () => {
    const t = target('sensors/f1/t7/data', { 'sensors/+/+/data': { measurement: 'sensor_data', database: 'iot', tags_from_topic: [{ position: 1, tag_name: 'loc' }] }, 'sensors/#': 'other' });
    expect(t).toEqual({ measurement: 'sensor_data', database: 'iot', tags: [['loc', 'f1']] });
    const [b] = decodeMessage(json({ v: 1 }), t, NOW);
    expect(col(b!, 'loc')).toMatchObject({ tag: true, values: ['f1'] });
    expect(target('sensors/x', { 'sensors/#': 'other' }).measurement).toBe('other');
    expect(target('a/b.c d').measurement).toBe('b_c_d');
  });

  test.each([
    ['not json {', 'invalid'],
    ['{"v": "only a tag"}', 'no fields'],
    ['[]', 'no points'],
    ['{"m": "bad/name", "v": 1}', 'invalid measurement'],
    ['[{"v": 1}, {"v": "x", "w": 2}]', "column 'v'"],
    ['{"v": {"nested": 1}}', "field 'v'"],
    ['{"time": "yesterday", "v": 1}', 'time'],
    ['{"tags": {"time": "x"}, "fields": {"v": 1}}', 'reserved'],
  ])('bad message %s is refused whole: %s', (text, why) => {
    expect(() => decodeMessage(new TextEncoder().encode(text), target(), NOW)).toThrow(why);
  });

  test('malformed MessagePack is refused', () => {
    expect(() => decodeMessage(new Uint8Array([0x81, 0xa1]), target(), NOW)).toThrow('invalid MessagePack');
    expect(() => decodeMessage(new Uint8Array([0xdd, 0xff, 0xff, 0xff, 0xff]), target(), NOW)).toThrow('truncated');
  });
});
