import { describe, expect, test } from 'bun:test';
import { encodeWriteRequest, remoteWriteBody } from '../../../tests/helpers/prom-write.ts';
import { parseRemoteWrite, uncompressSnappy } from './remote-write-parser.ts';

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
});
