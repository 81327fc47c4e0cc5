/** Real InfluxDB clients from npm write unchanged: @influxdata/influxdb-client (v2 API) and influx (v1 API). */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { InfluxDB as InfluxV2, Point } from '@influxdata/influxdb-client';
import { InfluxDB as InfluxV1, FieldType } from 'influx';
import { queryFiles } from './helpers/parquet.ts';
import { ADMIN_TOKEN, startServer, type TestServer } from './helpers/server.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startServer({ env: { SVC_INGEST_MAX_BUFFER_AGE_MS: '600000' } });
});
afterAll(() => s.cleanup());

const T = new Date(Date.UTC(2024, 4, 6, 7, 8, 9, 123));
const flush = async () => expect((await s.fetch('/api/v1/write/line-protocol/flush', { method: 'POST' })).status).toBe(200);

describe('InfluxDB clients', () => {
  test('@influxdata/influxdb-client v2 write API (Authorization: Token, bucket, org, ns precision)', async () => {
    const api = new InfluxV2({ url: s.url, token: ADMIN_TOKEN }).getWriteApi('any-org', 'clientv2', 'ns');
    for (let i = 0; i < 50; i++)
      api.writePoint(new Point('cpu').tag('host', `h${i % 5}`).floatField('usage', i / 2).intField('n', i).booleanField('ok', i % 2 === 0).stringField('s', `v${i}`).timestamp(new Date(T.getTime() + i)));
    await api.close();
    await flush();
    const got = await queryFiles(s.dir, `SELECT count(*)::INT AS c, sum(n)::INT AS n, min(epoch_ms(time))::DOUBLE AS t0, count(DISTINCT host)::INT AS hosts FROM $files(clientv2/cpu/**/*.parquet)`);
    expect(got).toEqual([{ c: 50, n: (49 * 50) / 2, t0: T.getTime(), hosts: 5 }]);
  });

  test('influx (node-influx) v1 writePoints (/write, db, p token, precision n)', async () => {
    const [host, port] = s.url.replace('http://', '').split(':');
    const influx = new InfluxV1({
      host,
      port: Number(port),
      database: 'clientv1',
      username: 'svc',
      password: ADMIN_TOKEN,
      schema: [{ measurement: 'mem', tags: ['host'], fields: { used: FieldType.INTEGER, ratio: FieldType.FLOAT } }],
    });
    await influx.writePoints(
      Array.from({ length: 20 }, (_, i) => ({ measurement: 'mem', tags: { host: `h${i % 2}` }, fields: { used: i, ratio: i / 10 }, timestamp: new Date(T.getTime() + i * 1000) })),
    );
    await influx.writePoints([{ measurement: 'mem', tags: { host: 'ms' }, fields: { used: 99, ratio: 0 }, timestamp: new Date(T.getTime() + 60_000) }], { precision: 'ms' });
    await flush();
    const got = await queryFiles(s.dir, `SELECT count(*)::INT AS c, max(used)::INT AS u, max(epoch_ms(time))::DOUBLE AS t1 FROM $files(clientv1/mem/**/*.parquet)`);
    expect(got).toEqual([{ c: 21, u: 99, t1: T.getTime() + 60_000 }]);
  });
});
