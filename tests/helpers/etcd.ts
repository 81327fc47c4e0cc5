/**
 * A real etcd cluster for tests: three members (Debian's etcd-server) on loopback ports, each with
 * its own data directory, that tests can kill one by one (SIGKILL) and start again.
 */
import type { Subprocess } from 'bun';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toolPresent } from './ci.ts';
import { freePort } from './mqtt-brokers.ts';

/** One etcd member: its client URL and its process while it runs. */
export interface EtcdMember {
  name: string;
  clientUrl: string;
  peerUrl: string;
  dataDir: string;
  proc: Subprocess | null;
  logFile: string;
}

/** A running test cluster. */
export interface TestEtcd {
  members: EtcdMember[];
  endpoints: string[];
  /** Kills one member with SIGKILL. */
  kill(name: string): Promise<void>;
  /** Starts a killed member again with its data. */
  start(name: string): Promise<void>;
  /** The name of the member that leads now. */
  leader(): Promise<string>;
  stop(): Promise<void>;
}

/** Whether the etcd binary is on this machine; under CI its absence is a failure, not a skip. */
export function etcdAvailable(): boolean {
  return toolPresent(Bun.which('etcd') !== null, 'etcd (the Debian package etcd-server)');
}

function spawnMember(m: EtcdMember, cluster: string, token: string, state: 'new' | 'existing'): Subprocess {
  return Bun.spawn(
    [
      'etcd',
      '--name', m.name,
      '--data-dir', m.dataDir,
      '--listen-client-urls', m.clientUrl,
      '--advertise-client-urls', m.clientUrl,
      '--listen-peer-urls', m.peerUrl,
      '--initial-advertise-peer-urls', m.peerUrl,
      '--initial-cluster', cluster,
      '--initial-cluster-state', state,
      '--initial-cluster-token', token,
      // Short timers keep leader loss in tests to about a second.
      '--heartbeat-interval', '100',
      '--election-timeout', '1000',
      '--log-level', 'error',
    ],
    // etcd 3.4 logs raft progress whatever the level; a file, not a pipe nobody drains.
    { stdin: 'ignore', stdout: Bun.file(m.logFile), stderr: Bun.file(m.logFile) },
  );
}

async function healthy(url: string, timeoutMs: number, log: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) });
      if (res.ok && ((await res.json()) as { health?: string }).health === 'true') return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`etcd member ${url} did not become healthy:\n${log()}`);
    await Bun.sleep(50);
  }
}

const tail = (file: string) => {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-15).join('\n');
  } catch {
    return '(no log)';
  }
};

/** Starts a three-member etcd cluster (or `size` members) and waits until it is healthy. */
export async function startEtcd(size = 3): Promise<TestEtcd> {
  const root = mkdtempSync(join(tmpdir(), 'svc-etcd-'));
  const members: EtcdMember[] = [];
  for (let i = 0; i < size; i++) {
    const [cp, pp] = [await freePort(), await freePort()];
    members.push({ name: `m${i}`, clientUrl: `http://127.0.0.1:${cp}`, peerUrl: `http://127.0.0.1:${pp}`, dataDir: join(root, `m${i}`), logFile: join(root, `m${i}.log`), proc: null });
  }
  const cluster = members.map((m) => `${m.name}=${m.peerUrl}`).join(',');
  for (const m of members) m.proc = spawnMember(m, cluster, root, 'new');
  await Promise.all(members.map((m) => healthy(m.clientUrl, 30_000, () => tail(m.logFile))));
  const byName = (name: string) => {
    const m = members.find((x) => x.name === name);
    if (!m) throw new Error(`no etcd member ${name}`);
    return m;
  };
  return {
    members,
    endpoints: members.map((m) => m.clientUrl),
    async kill(name) {
      const m = byName(name);
      m.proc?.kill('SIGKILL');
      await m.proc?.exited;
      m.proc = null;
    },
    async start(name) {
      const m = byName(name);
      m.proc = spawnMember(m, cluster, root, 'existing');
      await healthy(m.clientUrl, 30_000, () => tail(m.logFile));
    },
    async leader() {
      for (const m of members) {
        if (!m.proc) continue;
        try {
          const res = await fetch(`${m.clientUrl}/v3/maintenance/status`, { method: 'POST', body: '{}', signal: AbortSignal.timeout(1000) });
          const s = (await res.json()) as { leader?: string; header?: { member_id?: string } };
          if (s.leader && s.leader === s.header?.member_id) return m.name;
        } catch {
          // try the next member
        }
      }
      throw new Error('no etcd member reports itself leader');
    },
    async stop() {
      for (const m of members) {
        m.proc?.kill('SIGKILL');
        await m.proc?.exited;
        m.proc = null;
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/**
 * The settings every svc node of a test cluster shares: cluster `name` over `etcd`, this node's `id` and
 * `role`, fast heartbeats, and no memory service (its own records would only add flushes). Each suite
 * spreads its storage and its own timings over this.
 */
export function clusterNodeEnv(etcd: TestEtcd, name: string, id: string, role: string): Record<string, string> {
  return {
    SVC_CLUSTER_ENABLED: 'true',
    SVC_CLUSTER_NAME: name,
    SVC_CLUSTER_NODE_ID: id,
    SVC_CLUSTER_ROLE: role,
    SVC_CLUSTER_ETCD_ENDPOINTS: etcd.endpoints.join(','),
    SVC_CLUSTER_HEARTBEAT_INTERVAL: '500ms',
    SVC_MEMORY_ENABLED: 'false',
  };
}
