// Temporary: CPU per segment PUT, AWS SDK vs Bun.S3Client, against s3rver; and per fenced-style txn against 3 etcd.
import { readFileSync } from 'node:fs';
import { S3Backend } from '../../src/storage/s3/s3-backend.ts';
import { startS3rver, S3RVER_KEY } from '../../tests/helpers/s3rver.ts';
import { startEtcd } from '../../tests/helpers/etcd.ts';
import { EtcdClient } from '../../src/cluster/etcd/etcd-client.ts';
function cpu(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}
const N = Number(process.env.N ?? 300);
const s3 = await startS3rver(['b']);
const [etcd] = await Promise.all([startEtcd(3)]);
const body = new Uint8Array(19 * 1024).map((_, i) => (i * 7) & 255);
const sdk = new S3Backend({ bucket: 'b', region: 'us-east-1', endpoint: s3.endpoint, pathStyle: true, ...S3RVER_KEY });
const bun = new Bun.S3Client({ bucket: 'b', region: 'us-east-1', endpoint: s3.endpoint, accessKeyId: S3RVER_KEY.accessKey, secretAccessKey: S3RVER_KEY.secretKey });
const client = new EtcdClient({ endpoints: etcd.endpoints });
async function measure(label: string, f: (i: number) => Promise<unknown>) {
  for (let i = 0; i < 20; i++) await f(i);
  const c0 = process.cpuUsage(); const s0 = cpu(s3.pid); const e0 = etcd.members.reduce((a, m) => a + cpu(m.proc!.pid), 0); const t0 = performance.now();
  for (let i = 0; i < N; i++) await f(i);
  const c = process.cpuUsage(c0); const wall = performance.now() - t0;
  const s = cpu(s3.pid) - s0; const e = etcd.members.reduce((a, m) => a + cpu(m.proc!.pid), 0) - e0;
  console.log(`${label}: wall ${(wall / N).toFixed(2)} ms/call, client CPU ${((c.user + c.system) / 1000 / N).toFixed(2)} ms, s3rver ${(s * 1000 / N).toFixed(2)} ms, etcd ${(e * 1000 / N).toFixed(2)} ms`);
}
for (let r = 0; r < 1; r++) {
  await measure('sdk put', (i) => sdk.upload(`x/sdk-${r}-${i}.seg`, body));
  await measure('bun put', (i) => bun.write(`x/bun-${r}-${i}.seg`, body));
  await measure('presign+fetch put', async (i) => { const url = bun.presign(`x/pre-${r}-${i}.seg`, { method: 'PUT', expiresIn: 300 }); const res = await fetch(url, { method: 'PUT', body }); if (!res.ok) throw new Error(await res.text()); await res.arrayBuffer(); return res.headers.get('etag'); });
  await measure('etcd txn', (i) => client.txn([{ key: '/p/elect', target: 'CREATE', result: 'EQUAL', revision: 0 }], [{ put: { key: `/p/wal/segments/n-${r}-${i}`, value: JSON.stringify({ object: `_cluster/x/wal/${i}.seg`, entries: 2, node: 'w', created_at: new Date().toISOString() }) } }]));
  await measure('etcd put', (i) => client.put(`/p/wal/x/n-${r}-${i}`, 'v'));
}
console.log(await bun.exists('x/bun-0-1.seg'), (await sdk.get('x/bun-0-1.seg')).length);
await Promise.all([etcd.stop(), s3.close()]);
