import { describe, expect, test } from 'bun:test';
import { encodeRequestV2, encodeWriteRequest, remoteWriteBody, remoteWriteBodyV2, type SeriesV2 } from '../../../tests/helpers/prom-write.ts';
import snappy from 'snappyjs';
import type { ColumnBatch } from '../column-batch.ts';
import { decodeRemoteWrite, parseRemoteWrite, uncompressSnappy } from './remote-write-parser.ts';
import { decodeRemoteWriteV2, parseRemoteWriteV2 } from './remote-write-v2.ts';
import { SeriesTable } from './series-table.ts';
import { uncompressSnappyScratch } from './snappy.ts';

/** Rows of batches as [measurement, time, value, tags...] sorted, to compare parses independently of order. */
function rows(batches: readonly ColumnBatch[]): string[] {
  const out: string[] = [];
  for (const b of batches)
    for (let r = 0; r < b.length; r++) {
      const cells = [...b.columns].filter(([name]) => name !== 'value').map(([name, col]) => `${name}=${col.values[r]}`);
      const value = b.columns.get('value')!;
      out.push([b.measurement, b.time[r], value.valid?.[r] === 0 ? 'null' : value.values[r], ...cells.sort()].join(' '));
    }
  return out.sort();
}

/** Label fields encoded by hand: a TimeSeries with its labels after its samples (valid protobuf, unusual order). */
function labelsAfterSamples(): Uint8Array {
  const enc = new TextEncoder();
  const bytes = (field: number, b: Uint8Array) => [(field << 3) | 2, b.length, ...b];
  const label = (n: string, v: string) => bytes(1, Uint8Array.from([...bytes(1, enc.encode(n)), ...bytes(2, enc.encode(v))]));
  const f = new DataView(new ArrayBuffer(8));
  f.setFloat64(0, 7, true);
  const sample = bytes(2, Uint8Array.from([0x09, ...new Uint8Array(f.buffer), 0x10, 0xe8, 0x07])); // value 7 at 1000 ms
  const series = Uint8Array.from([...label('__name__', 'late'), ...sample, ...label('job', 'x')]);
  return Uint8Array.from(bytes(1, series));
}

describe('remote-write parser', () => {
  test('metric name -> measurement, labels -> tags, samples -> value at ms timestamps; stale markers dropped, NaN null', () => {
    const body = remoteWriteBody([
      { labels: { __name__: 'up', job: 'svc', instance: 'a:1' }, samples: [[1, 1700000000000], [0, 1700000015000]] },
      { labels: { __name__: 'up', job: 'svc', instance: 'b:1', time: 'x' }, samples: [['stale', 1700000000000], [NaN, 1700000001000]] },
      { labels: { __name__: 'job:rate5m', job: 'svc' }, samples: [[2.5, -1000]] },
    ]);
    const r = parseRemoteWrite(uncompressSnappy(body, 1 << 20));
    expect(r.samples).toBe(4);
    expect(r.staleDropped).toBe(1);
    const up = r.batches.find((b) => b.measurement === 'up')!;
    expect(up.length).toBe(3);
    expect([...up.time]).toEqual([1700000000000000, 1700000015000000, 1700000001000000]);
    expect(up.columns.get('instance')!.values).toEqual(['a:1', 'a:1', 'b:1']);
    expect(up.columns.get('label_time')!.values).toEqual([null, null, 'x']);
    const value = up.columns.get('value')!;
    expect(value.type).toBe('float64');
    expect([...(value.values as Float64Array)].slice(0, 2)).toEqual([1, 0]);
    expect(value.valid?.[2]).toBe(0);
    const rate = r.batches.find((b) => b.measurement === 'job_rate5m')!;
    expect([...rate.time]).toEqual([-1000000]);
  });

  test('metrics with odd sample counts and tag counts share one allocation, every column aligned', () => {
    const r = parseRemoteWrite(
      encodeWriteRequest([
        { labels: { __name__: 'a', x: '1' }, samples: [[1, 1000]] },
        { labels: { __name__: 'b', x: '1', y: '2', z: '3' }, samples: [[2, 1000], [3, 2000], [4, 3000]] },
        { labels: { __name__: 'c' }, samples: [[5, 1000]] },
      ]),
    );
    expect(r.batches.map((b) => [b.measurement, [...(b.columns.get('value')!.values as Float64Array)], [...b.time]])).toEqual([
      ['a', [1], [1000000]],
      ['b', [2, 3, 4], [1000000, 2000000, 3000000]],
      ['c', [5], [1000000]],
    ]);
    expect(r.batches[1]!.columns.get('z')!.values).toEqual(['3', '3', '3']);
  });

  test('bad input: not snappy, truncated protobuf, missing __name__, oversized claim', () => {
    expect(() => uncompressSnappy(Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2), 1 << 20)).toThrow(/uncompresses to|snappy/);
    expect(() => parseRemoteWrite(encodeWriteRequest([{ labels: { __name__: 'up' }, samples: [[1, 1]] }]).subarray(0, 10))).toThrow(/remote-write/);
    expect(() => parseRemoteWrite(encodeWriteRequest([{ labels: { job: 'x' }, samples: [[1, 1]] }]))).toThrow(/__name__/);
    expect(() => uncompressSnappy(remoteWriteBody([{ labels: { __name__: 'up' }, samples: [[1, 1]] }]), 4)).toThrow(/max_payload_size/);
  });

  test('series seen before, in another order, with other label sets per metric, or labels after samples: same rows as a first parse', () => {
    const a = { labels: { __name__: 'cpu', host: 'a', job: 'j' }, samples: [[1, 1000]] as [number, number][] };
    const b = { labels: { __name__: 'cpu', host: 'b', job: 'j' }, samples: [[2, 1000]] as [number, number][] };
    const c = { labels: { __name__: 'cpu', zone: 'z1' }, samples: [[3, 2000], [4, 3000]] as [number, number][] };
    const d = { labels: { __name__: 'mem', host: 'a' }, samples: [[5, 1000]] as [number, number][] };
    const first = rows(parseRemoteWrite(encodeWriteRequest([a, b, c, d])).batches);
    expect(first).toEqual([
      'cpu 1000000 1 host=a job=j zone=null',
      'cpu 1000000 2 host=b job=j zone=null',
      'cpu 2000000 3 host=null job=null zone=z1',
      'cpu 3000000 4 host=null job=null zone=z1',
      'mem 1000000 5 host=a',
    ]);
    // The table now knows every series and their order; other orders must not be mistaken for it.
    expect(rows(parseRemoteWrite(encodeWriteRequest([a, b, c, d])).batches)).toEqual(first);
    expect(rows(parseRemoteWrite(encodeWriteRequest([d, c, b, a])).batches)).toEqual(first);
    expect(rows(parseRemoteWrite(encodeWriteRequest([b, d, a, c])).batches)).toEqual(first);
    expect(rows(parseRemoteWrite(encodeWriteRequest([a, c])).batches)).toEqual([first[0], first[2], first[3]]);
    const late = rows(parseRemoteWrite(labelsAfterSamples()).batches);
    expect(late).toEqual(['late 1000000 7 job=x']);
    expect(rows(parseRemoteWrite(labelsAfterSamples()).batches)).toEqual(late);
  });

  test('a column keeps its dictionary array while its values repeat, and gets a new one when they change', () => {
    const series = (host: string) => ({ labels: { __name__: 'dict_reuse', host }, samples: [[1, 1000]] as [number, number][] });
    const dict = (body: Uint8Array) => (parseRemoteWrite(body).batches[0]!.columns.get('host') as { dict: { dictionary: unknown[] } }).dict.dictionary;
    const one = dict(encodeWriteRequest([series('a'), series('b')]));
    expect(dict(encodeWriteRequest([series('a'), series('b')]))).toBe(one);
    const other = dict(encodeWriteRequest([series('b'), series('a')]));
    expect(other).not.toBe(one);
    expect(other).toEqual([null, 'b', 'a']);
    expect(one).toEqual([null, 'a', 'b']);
  });

  test('the series table starts over past its bounds, between requests only', () => {
    const t = new SeriesTable({ maxSeries: 2 });
    const key = (s: string) => new TextEncoder().encode(s);
    const ids = ['k1', 'k2', 'k3'].map((k) => t.add(key(k), 0, 2, 7, 'm', ['host', k]));
    expect(ids).toEqual([0, 1, 2]);
    expect(t.find(key('k3'), 0, 2, 7)).toBe(2);
    t.startRequest();
    expect(t.epoch).toBe(1);
    expect(t.find(key('k1'), 0, 2, 7)).toBe(-1);
    expect(t.add(key('k1'), 0, 2, 7, 'm', ['host', 'k1'])).toBe(0);
    expect(t.pairValue[t.pairList[t.seriesPairStart[0]!]!]).toBe('k1');
  });

  test('snappy: the same bytes as snappyjs on random and repetitive data; corrupt input is refused, never read out of bounds', () => {
    let seed = 42;
    const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 16) & 0xff;
    for (const size of [0, 1, 5, 60, 61, 300, 70_000, 300_000]) {
      const data = new Uint8Array(size);
      for (let i = 0; i < size; i++) data[i] = size % 2 ? rand() : i % 7 === 0 ? rand() : data[Math.max(0, i - 13)]!;
      const compressed = snappy.compress(data);
      expect(Buffer.compare(uncompressSnappy(compressed, 1 << 20), data)).toBe(0);
      expect(Buffer.compare(uncompressSnappyScratch(compressed, 1 << 20), data)).toBe(0);
      // Every truncation and a flipped byte: an error (400), not garbage or a crash.
      for (const cut of [1, 2, compressed.length >> 1, compressed.length - 1])
        if (cut > 0 && cut < compressed.length && size > 0) expect(() => uncompressSnappy(compressed.subarray(0, cut), 1 << 20)).toThrow(/snappy|uncompresses/);
    }
    for (let trial = 0; trial < 200; trial++) {
      const garbage = Uint8Array.from({ length: 1 + (trial % 40) }, rand);
      try {
        const out = uncompressSnappy(garbage, 1 << 16);
        expect(out.length).toBeLessThanOrEqual(1 << 16);
      } catch (err) {
        expect((err as Error).message).toMatch(/remote-write body/);
      }
    }
  });

  test('decodeRemoteWrite reuses its buffer: a large body then a small one decode correctly', () => {
    const big = Array.from({ length: 500 }, (_, i) => ({ labels: { __name__: 'reuse', host: `h${i}` }, samples: [[i, 1000]] as [number, number][] }));
    expect(decodeRemoteWrite(remoteWriteBody(big), 1 << 20).samples).toBe(500);
    const small = decodeRemoteWrite(remoteWriteBody([{ labels: { __name__: 'reuse', host: 'x' }, samples: [[9, 2000]] }]), 1 << 20);
    expect(rows(small.batches)).toEqual(['reuse 2000000 9 host=x']);
  });
});

describe('remote-write 2.0 parser', () => {
  const series: SeriesV2[] = [
    { labels: { __name__: 'v2_up', job: 'svc', instance: 'a:1' }, samples: [[1, 1700000000000], [0, 1700000015000]], metadata: { type: 2, help: 'Up.', unit: '' } },
    { labels: { __name__: 'v2_up', job: 'svc', instance: 'b:1', value: 'x' }, samples: [['stale', 1700000000000], [NaN, 1700000001000]], createdMs: 1699999990000 },
    { labels: { __name__: 'job:v2_rate5m', job: 'svc' }, samples: [[2.5, -1000]], exemplars: [{ labels: { trace_id: 'abc' }, value: 2.5, ms: -1000 }] },
  ];

  test('the same rows as 1.0 for the same series, whatever the layout (symbols last, unpacked refs), and again once the series are known', () => {
    const v1 = rows(parseRemoteWrite(encodeWriteRequest(series)).batches);
    expect(v1.length).toBe(4);
    for (const layout of [{}, { symbolsLast: true }, { unpackedRefs: true }, {}]) {
      const r = parseRemoteWriteV2(encodeRequestV2(series, layout));
      expect(rows(r.batches)).toEqual(v1);
      expect([r.samples, r.staleDropped, r.histograms, r.exemplars]).toEqual([4, 1, 0, 1]);
    }
    expect(rows(decodeRemoteWriteV2(remoteWriteBodyV2([...series].reverse()), 1 << 20).batches)).toEqual(v1);
  });

  test('native histograms become <metric>_count and <metric>_sum rows; a stale histogram is dropped; buckets are not stored', () => {
    const r = parseRemoteWriteV2(
      encodeRequestV2([
        {
          labels: { __name__: 'v2_latency', route: '/a' },
          samples: [],
          histograms: [
            { count: 10, sum: 2.5, ms: 1000 },
            { count: 12.5, sum: 3, ms: 2000, float: true },
            { count: 0, sum: 'stale', ms: 3000 },
          ],
        },
        { labels: { __name__: 'v2_plain' }, samples: [[7, 1000]] },
      ]),
    );
    expect(r.histograms).toBe(3);
    expect(r.samples).toBe(1);
    expect(rows(r.batches)).toEqual([
      'v2_latency_count 1000000 10 route=/a',
      'v2_latency_count 2000000 12.5 route=/a',
      'v2_latency_sum 1000000 2.5 route=/a',
      'v2_latency_sum 2000000 3 route=/a',
      'v2_plain 1000000 7',
    ]);
  });

  test('bad input: a symbol reference past the table (named), an odd number of refs, truncation, no __name__', () => {
    const good = encodeRequestV2([{ labels: { __name__: 'v2_bad', host: 'h' }, samples: [[1, 1000]] }]);
    // Symbols: '', __name__, v2_bad, host, h -> refs 1 2 3 4; make the last ref 9.
    const bad = Uint8Array.from(good);
    const at = bad.lastIndexOf(4, bad.length - 12);
    expect(bad[at - 1]).toBe(3);
    bad[at] = 9;
    expect(() => parseRemoteWriteV2(bad)).toThrow('timeseries 0 has a label value symbol reference 9, but the request has 5 symbols');
    const meta = encodeRequestV2([{ labels: { __name__: 'v2_meta' }, samples: [[1, 1000]], metadata: { type: 1, help: 'h', unit: 'u' } }]);
    const badMeta = Uint8Array.from(meta);
    badMeta[badMeta.length - 1] = 40; // unit_ref, the last byte of the message
    expect(() => parseRemoteWriteV2(badMeta)).toThrow('metadata unit symbol reference 40');
    // Exemplar: symbols '', __name__, v2_ex, trace_id, t; its refs (3 4) are packed right after field tag 0x22 and length.
    const ex = encodeRequestV2([{ labels: { __name__: 'v2_ex' }, samples: [[1, 1000]], exemplars: [{ labels: { trace_id: 't' }, value: 1, ms: 1000 }] }]);
    const badEx = Uint8Array.from(ex);
    const exAt = badEx.lastIndexOf(0x22);
    expect([badEx[exAt + 2], badEx[exAt + 4], badEx[exAt + 5]]).toEqual([0x0a, 3, 4]);
    badEx[exAt + 5] = 50;
    expect(() => parseRemoteWriteV2(badEx)).toThrow('timeseries 0 has an exemplar label symbol reference 50, but the request has 5 symbols');
    expect(parseRemoteWriteV2(ex).exemplars).toBe(1);
    const odd = encodeRequestV2([{ labels: { __name__: 'v2_odd' }, samples: [[1, 1000]] }], { unpackedRefs: true });
    const oddCut = Uint8Array.from([...odd.subarray(0, odd.indexOf(0x2a, 10) + 2), ...odd.subarray(odd.indexOf(0x2a, 10) + 4)]);
    oddCut[oddCut.indexOf(0x2a, 10) + 1] -= 2;
    expect(() => parseRemoteWriteV2(oddCut)).toThrow(/odd number of label references/);
    // Every cut inside the TimeSeries field (a cut between fields is a shorter valid message).
    for (let cut = good.indexOf(0x2a) + 1; cut < good.length; cut++) expect(() => parseRemoteWriteV2(good.subarray(0, cut))).toThrow(/remote-write/);
    expect(() => parseRemoteWriteV2(encodeRequestV2([{ labels: { job: 'x' }, samples: [[1, 1]] }]))).toThrow(/__name__/);
    // A series with metadata and no data makes no rows and is no error.
    expect(parseRemoteWriteV2(encodeRequestV2([{ labels: { job: 'x' }, samples: [], metadata: { type: 2, help: 'h', unit: '' } }])).batches).toEqual([]);
  });
});
