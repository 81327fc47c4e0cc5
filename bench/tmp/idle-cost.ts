// Temporary: CPU per second of etcd (3 members), and of an idle cluster writer + reader.
import { readFileSync } from 'node:fs';
import { startEtcd } from '../../tests/helpers/etcd.ts';
import { startS3rver } from '../../tests/helpers/s3rver.ts';
import { startServer } from '../../tests/helpers/server.ts';
function cpu(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const x = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(x[11]) + Number(x[12])) / 100;
}
const [etcd, s3] = await Promise.all([startEtcd(3), startS3rver(['clus'])]);
const ep = etcd.members.map((m) => m.proc!.pid);
const sum = (ps: number[]) => ps.reduce((a, p) => a + cpu(p), 0);
const S = 8;
async function window(label: string, pids: Record<string, number[]>) {
  const b = Object.fromEntries(Object.entries(pids).map(([k, v]) => [k, sum(v)]));
  await Bun.sleep(S * 1000);
  console.log(label, Object.entries(pids).map(([k, v]) => `${k} ${((sum(v) - b[k]!) / S).toFixed(3)} cores`).join(', '));
}
await window('etcd alone:', { etcd: ep });
const common = { SVC_MEMORY_ENABLED: 'false' };
const cl = (id: string, role: string) => ({ ...s3.env('clus'), ...common, SVC_CLUSTER_ENABLED: 'true', SVC_CLUSTER_NODE_ID: id, SVC_CLUSTER_ROLE: role, SVC_CLUSTER_ETCD_ENDPOINTS: etcd.endpoints.join(',') });
const [w, r] = await Promise.all([startServer({ env: cl('w', 'writer') }), startServer({ env: cl('r', 'reader') })]);
await Bun.sleep(3000);
await window('idle writer+reader:', { etcd: ep, writer: [w.proc.pid], reader: [r.proc.pid], s3rver: [s3.pid] });
await Promise.all([w.cleanup(), r.cleanup()]);
await Promise.all([etcd.stop(), s3.close()]);
