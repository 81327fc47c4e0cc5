import { scrubValue } from '../lib/scrub.ts';

/** Log levels in increasing severity. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** One structured log line, as kept in the buffer behind /api/v1/logs. */
export interface LogEntry {
  time: string;
  level: LogLevel;
  msg: string;
  component?: string;
  [field: string]: unknown;
}

const rank = (l: LogLevel) => LOG_LEVELS.indexOf(l);

/**
 * Structured logger: writes text or JSON lines to stderr and keeps the last `bufferSize` entries in memory.
 * Every entry is scrubbed here, at the one sink both outputs share (lib/scrub.ts's rules): a token a
 * client sent, echoed in an error message or a field, never reaches stderr or GET /api/v1/logs.
 */
export class Logger {
  private readonly ring: LogEntry[] = [];
  private next = 0;

  constructor(
    private readonly opts: { level: LogLevel; format: 'text' | 'json'; bufferSize: number; write?: (line: string) => void },
    private readonly bound: Record<string, unknown> = {},
    private readonly root?: Logger,
  ) {}

  /** A logger that adds `fields` (for example a component name) to every entry. */
  child(fields: Record<string, unknown>): Logger {
    return new Logger(this.opts, { ...this.bound, ...fields }, this.root ?? this);
  }

  debug(msg: string, fields?: Record<string, unknown>): void {
    this.log('debug', msg, fields);
  }
  info(msg: string, fields?: Record<string, unknown>): void {
    this.log('info', msg, fields);
  }
  warn(msg: string, fields?: Record<string, unknown>): void {
    this.log('warn', msg, fields);
  }
  error(msg: string, fields?: Record<string, unknown>): void {
    this.log('error', msg, fields);
  }

  /** True when entries of `level` are written, so callers can skip building costly fields. */
  enabled(level: LogLevel): boolean {
    return rank(level) >= rank(this.opts.level);
  }

  /** Buffered entries, newest last, filtered by minimum level and age. */
  recent(q: { limit: number; level?: LogLevel; sinceMs?: number }): LogEntry[] {
    const owner = this.root ?? this;
    const all = owner.ordered();
    const since = q.sinceMs === undefined ? -Infinity : Date.now() - q.sinceMs;
    const out = all.filter((e) => (q.level === undefined || rank(e.level) >= rank(q.level)) && Date.parse(e.time) >= since);
    return out.slice(-q.limit);
  }

  private ordered(): LogEntry[] {
    return this.ring.length < this.opts.bufferSize ? [...this.ring] : [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)];
  }

  private log(level: LogLevel, msg: string, fields?: Record<string, unknown>): void {
    if (!this.enabled(level)) return;
    const entry = scrubValue({ time: new Date().toISOString(), level, msg, ...this.bound, ...fields }) as LogEntry;
    (this.root ?? this).keep(entry);
    const line = this.opts.format === 'json' ? JSON.stringify(entry) : formatText(entry);
    (this.opts.write ?? ((l: string) => process.stderr.write(l + '\n')))(line);
  }

  private keep(entry: LogEntry): void {
    if (this.ring.length < this.opts.bufferSize) this.ring.push(entry);
    else this.ring[this.next] = entry;
    this.next = (this.next + 1) % this.opts.bufferSize;
  }
}

function formatText(e: LogEntry): string {
  const { time, level, msg, ...rest } = e;
  const extra = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === 'string' && !/\s/.test(v) ? v : JSON.stringify(v)}`)
    .join(' ');
  return `${time} ${level.toUpperCase().padEnd(5)} ${msg}${extra ? ' ' + extra : ''}`;
}
