/** Child processes for test peers (brokers, object-store emulators): spawn, collect output, wait for a line. */
import type { Subprocess } from 'bun';

/** A started child, the match of its ready line, and everything it printed so far. */
export interface ReadyChild {
  proc: Subprocess<'ignore', 'pipe', 'pipe'>;
  match: RegExpExecArray;
  output(): string;
}

/** Spawns `cmd` and resolves once its output matches `ready`; kills it and throws (with its output) on exit or timeout. */
export async function spawnUntil(cmd: string[], ready: RegExp, what: string, opts: { cwd?: string; timeoutMs?: number } = {}): Promise<ReadyChild> {
  const proc: Subprocess<'ignore', 'pipe', 'pipe'> = Bun.spawn(cmd, { cwd: opts.cwd, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' });
  let out = '';
  const pump = async (s: ReadableStream<Uint8Array>) => {
    const dec = new TextDecoder();
    for await (const chunk of s) out += dec.decode(chunk, { stream: true });
  };
  void pump(proc.stdout);
  void pump(proc.stderr);
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  let m: RegExpExecArray | null = null;
  while (!(m = ready.exec(out))) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill();
      throw new Error(`${what} did not start:\n${out}`);
    }
    await Bun.sleep(20);
  }
  return { proc, match: m, output: () => out };
}

/** A response body parsed as JSON, or its text when it is not JSON (error pages, empty bodies as null). */
export function jsonOrText(text: string): any {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return text;
  }
}
