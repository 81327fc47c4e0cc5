/**
 * One Postgres client connection: startup and SCRAM authentication, then the simple and extended
 * query protocols. Every statement that is not session bookkeeping (statements.ts) runs through
 * QueryService.execute, the entry point of the HTTP query routes, with the session's database.
 */
import { randomInt } from 'node:crypto';
import type { AuditLog } from '../audit/index.ts';
import { mayDo, type Authorizer, type Principal, type TokenService } from '../auth/index.ts';
import { AppError } from '../lib/errors.ts';
import { looksSecret, REDACTED, scrubText } from '../lib/scrub.ts';
import type { Logger } from '../observability/index.ts';
import type { BoundParam, QueryService, QuerySession, ResultColumn } from '../query/index.ts';
import { CANCEL_REQUEST, GSSENC_REQUEST, MessageReader, MessageWriter, PROTOCOL_3, SSL_REQUEST, type FrontendMessage } from './messages.ts';
import { binaryParamText, binaryValue, duckTypeOfParam, OID, oidOf, textValue, typeSize } from './pg-types.ts';
import { mechanismRefusal, SCRAM, ScramExchange } from './scram-exchange.ts';
import { localCommand, splitStatements, type LocalCommand } from './statements.ts';

/** What every session shares (built once by the listener). */
export interface SessionDeps {
  tokens: TokenService;
  /** What the session's token may read (RBAC), decided per statement like the HTTP routes. */
  authorizer: Authorizer;
  queries: QueryService;
  authEnabled: boolean;
  logger: Logger | null;
  /** Reported as server_version; version() says svc's own. */
  serverVersion: string;
  svcVersion: string;
  /** Cancel keys of running sessions: (pid, secret) -> cancel. */
  cancels: Map<number, { secret: number; cancel: () => void }>;
  /** The client's address, for query management. */
  clientIp: string | null;
  /** Logins (either outcome) are recorded; statements as HTTP queries are (audit_log.include_reads). */
  audit: AuditLog | null;
}

interface Result {
  columns: ResultColumn[];
  rows: unknown[][];
}
interface Statement {
  sql: string;
  paramOids: number[];
  local: LocalCommand | null;
  described?: ResultColumn[];
}
interface Portal {
  statement: Statement;
  params: BoundParam[];
  resultFormats: number[];
  result?: Result;
  sent: number;
}

const DEFAULT_SETTINGS: [string, string][] = [
  ['server_version', ''],
  ['server_version_num', ''],
  ['server_encoding', 'UTF8'],
  ['client_encoding', 'UTF8'],
  ['datestyle', 'ISO, MDY'],
  ['timezone', 'UTC'],
  ['intervalstyle', 'postgres'],
  ['integer_datetimes', 'on'],
  ['standard_conforming_strings', 'on'],
  ['transaction_isolation', 'read committed'],
  ['transaction_read_only', 'on'],
  ['default_transaction_read_only', 'on'],
  ['extra_float_digits', '1'],
  ['max_identifier_length', '63'],
  ['search_path', ''],
  ['application_name', ''],
  ['is_superuser', 'off'],
];
/** Settings clients read from ParameterStatus at connect. */
const REPORTED = ['server_version', 'server_encoding', 'client_encoding', 'DateStyle', 'TimeZone', 'integer_datetimes', 'standard_conforming_strings', 'application_name', 'IntervalStyle', 'is_superuser'];

/** A connection's state machine; `send` writes bytes to the socket, `close` ends it. */
export class PgSession {
  private phase: 'startup' | 'sasl' | 'password' | 'ready' | 'closed' = 'startup';
  /** Over pgwire.max_connections: the startup packet gets 53300 (refuse). */
  private refused = false;
  /** The connection switched to TLS after an SSLRequest: the token may then be sent as a cleartext password. */
  private tls = false;
  private readonly out = new MessageWriter();
  private readonly settings = new Map<string, string>(DEFAULT_SETTINGS);
  private readonly statements = new Map<string, Statement>();
  private readonly portals = new Map<string, Portal>();
  private scram: ScramExchange | null = null;
  private principal: Principal | null = null;
  private user = '';
  private database = '';
  private readonly pid = randomInt(1, 2 ** 31 - 1);
  private readonly secret = randomInt(0, 2 ** 31 - 1);
  private running: AbortController | null = null;
  /** After an error in the extended protocol, messages are skipped until Sync. */
  private skipToSync = false;
  /** Messages are handled one at a time, in order, even while a query awaits. */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: SessionDeps,
    private readonly send: (bytes: Uint8Array) => void,
    private readonly close: () => void,
    /** Switches the connection to TLS after 'S' is sent; null when no certificate is configured (answer 'N'). */
    private readonly startTls: (() => void) | null,
  ) {
    this.settings.set('server_version', deps.serverVersion);
    this.settings.set('server_version_num', serverVersionNum(deps.serverVersion));
  }

  /** Queues `messages` for handling in arrival order. */
  receive(messages: FrontendMessage[]): void {
    for (const m of messages) this.queue = this.queue.then(() => this.handle(m)).catch((err) => this.fatal(err));
  }

  /** Authentication is over: the connection may send messages of any allowed size. */
  get loggedIn(): boolean {
    return this.phase === 'ready';
  }

  /**
   * The listener is full: the connection's startup packet is answered with FATAL 53300 and the
   * connection closed. Read first, as Postgres does, so the client sees the error instead of a reset;
   * SSLRequest and CancelRequest are still served (a cancel must get through a full server).
   */
  refuse(): void {
    this.refused = true;
  }

  /** pgwire.login_timeout passed: FATAL 57P05 and close unless the client logged in. True when it closed the connection. */
  loginTimedOut(timeoutMs: number): boolean {
    if (this.phase === 'ready' || this.phase === 'closed') return false;
    this.error('57P05', `canceling authentication due to timeout: no login within pgwire.login_timeout (${timeoutMs / 1000}s)`, 'FATAL');
    this.flush();
    this.close();
    return true;
  }

  /** The connection closed: cancel what runs, forget the cancel key. */
  closed(): void {
    this.phase = 'closed';
    this.running?.abort();
    this.deps.cancels.delete(this.pid);
  }

  private flush(): void {
    if (this.out.size > 0 && this.phase !== 'closed') this.send(this.out.take());
  }

  private fatal(err: unknown): void {
    this.deps.logger?.warn('pgwire connection failed', { error: (err as Error).message });
    this.error('08P01', (err as Error).message, 'FATAL');
    this.flush();
    this.close();
  }

  private async handle(m: FrontendMessage): Promise<void> {
    if (this.phase === 'closed') return;
    if (m.type === '') return this.startup(m.body);
    if (this.phase === 'sasl') return this.saslMessage(m);
    if (this.phase === 'password') {
      if (m.type !== 'p') throw new Error(`expected a password message, got '${m.type}'`);
      return this.login(this.deps.tokens.verify(new MessageReader(m.body).cstr()), 'invalid token');
    }
    if (this.phase !== 'ready') throw new Error(`unexpected message '${m.type}' before authentication`);
    if (this.skipToSync && m.type !== 'S' && m.type !== 'X') return;
    switch (m.type) {
      case 'Q':
        return this.simpleQuery(new MessageReader(m.body).cstr());
      case 'P':
        return this.guarded(() => this.parse(new MessageReader(m.body)));
      case 'B':
        return this.guarded(() => this.bind(new MessageReader(m.body)));
      case 'D':
        return this.guarded(() => this.describe(new MessageReader(m.body)));
      case 'E':
        return this.guarded(() => this.execute(new MessageReader(m.body)));
      case 'C':
        return this.guarded(() => this.closeObject(new MessageReader(m.body)));
      case 'S':
        this.skipToSync = false;
        this.portals.delete('');
        this.ready();
        return this.flush();
      case 'H':
        return this.flush();
      case 'X':
        this.close();
        return;
      default:
        throw new Error(`unsupported message type '${m.type}'`);
    }
  }

  // --- startup and authentication ---

  private startup(body: Uint8Array): void {
    const r = new MessageReader(body);
    const code = r.int32();
    if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
      const upgraded = code === SSL_REQUEST && this.startTls !== null;
      this.send(Uint8Array.of(upgraded ? 0x53 : 0x4e));
      if (upgraded) {
        this.startTls!();
        this.tls = true;
      }
      return;
    }
    if (code === CANCEL_REQUEST) {
      const pid = r.int32();
      const secret = r.int32();
      const target = this.deps.cancels.get(pid);
      if (target && target.secret === secret) target.cancel();
      this.close();
      return;
    }
    if (this.refused) {
      this.error('53300', 'sorry, too many clients already', 'FATAL');
      this.flush();
      return this.close();
    }
    if (code !== PROTOCOL_3) throw new Error(`unsupported protocol version ${code >> 16}.${code & 0xffff}`);
    const params = new Map<string, string>();
    for (let k = r.cstr(); k !== ''; k = r.cstr()) params.set(k, r.cstr());
    this.user = params.get('user') ?? '';
    this.database = params.get('database') || this.user || 'default';
    this.settings.set('search_path', this.database);
    if (params.has('application_name')) this.settings.set('application_name', params.get('application_name')!);
    if (!this.deps.authEnabled) return this.authenticated(null);
    if (this.tls) {
      // Over TLS the token itself is the password, checked like an HTTP bearer token (any token works).
      this.phase = 'password';
      this.out.begin('R').int32(3).end();
      return this.flush();
    }
    this.scram = new ScramExchange(this.deps.tokens);
    this.phase = 'sasl';
    this.out.begin('R').int32(10).cstr(SCRAM).int8(0).end();
    this.flush();
  }

  private saslMessage(m: FrontendMessage): void {
    if (m.type !== 'p') throw new Error(`expected a SASL response, got '${m.type}'`);
    const r = new MessageReader(m.body);
    if (this.scram && !this.serverFirstSent) {
      const mechanism = r.cstr();
      if (mechanism !== SCRAM) throw new Error(mechanismRefusal(mechanism));
      const len = r.int32();
      const serverFirst = this.scram.first(Buffer.from(r.bytes(len)).toString('utf8'));
      this.serverFirstSent = true;
      this.out.begin('R').int32(11).bytes(Buffer.from(serverFirst)).end();
      return this.flush();
    }
    const result = this.scram!.final(Buffer.from(r.bytes(r.remaining)).toString('utf8'));
    if (result.ok) this.out.begin('R').int32(12).bytes(Buffer.from(result.serverFinal)).end();
    this.login(result.ok ? result.principal : null, result.ok ? '' : result.reason);
  }

  /** Ends authentication: refuses a missing principal (28P01) or one without read permission (42501). */
  private login(principal: Principal | null, reason: string): void {
    if (!principal) {
      this.deps.logger?.warn('pgwire authentication failed', { user: this.user, reason });
      this.audit('pgwire.login', 401, null, performance.now());
      this.error('28P01', `password authentication failed for user "${this.shownUser}": the password must be a valid svc token`, 'FATAL');
      this.flush();
      return this.close();
    }
    if (!mayDo(principal, 'read')) {
      this.audit('pgwire.login', 403, principal, performance.now());
      this.error('42501', `token '${principal.name}' lacks 'read' permission`, 'FATAL');
      this.flush();
      return this.close();
    }
    this.authenticated(principal);
  }
  private serverFirstSent = false;

  private authenticated(principal: Principal | null): void {
    this.principal = principal;
    this.phase = 'ready';
    this.out.begin('R').int32(0).end();
    for (const name of REPORTED) this.out.begin('S').cstr(name).cstr(this.settings.get(name.toLowerCase()) ?? '').end();
    this.out.begin('K').int32(this.pid).int32(this.secret).end();
    this.deps.cancels.set(this.pid, { secret: this.secret, cancel: () => this.running?.abort() });
    this.deps.logger?.info('pgwire session started', { user: this.user, database: this.database, token: principal?.name ?? null, application_name: this.settings.get('application_name') });
    this.audit('pgwire.login', 200, principal, performance.now());
    this.ready();
    this.flush();
  }

  private ready(): void {
    this.out.begin('Z').int8(0x49).end();
  }

  // --- simple query protocol ---

  private async simpleQuery(sql: string): Promise<void> {
    try {
      for (const one of splitStatements(sql)) {
        const statement = this.statementOf(one, []);
        if (statement.local?.kind === 'empty') {
          this.out.begin('I').end();
          continue;
        }
        const portal: Portal = { statement, params: [], resultFormats: [0], sent: 0 };
        await this.run(portal);
        if (portal.result) this.rowDescription(portal.result.columns, portal.resultFormats);
        this.sendRows(portal, 0);
        this.flush();
      }
    } catch (err) {
      this.queryError(err);
    }
    this.ready();
    this.flush();
  }

  // --- extended query protocol ---

  private async guarded(fn: () => Promise<void> | void): Promise<void> {
    try {
      await fn();
    } catch (err) {
      this.queryError(err);
      this.skipToSync = true;
      this.flush();
    }
  }

  private parse(r: MessageReader): void {
    const name = r.cstr();
    const sql = r.cstr();
    const n = r.int16();
    const oids = Array.from({ length: n }, () => r.int32());
    const parts = splitStatements(sql);
    if (parts.length > 1) throw new AppError('invalid', 'cannot insert multiple commands into a prepared statement');
    this.statements.set(name, this.statementOf(parts[0]!, oids));
    this.out.begin('1').end();
  }

  private bind(r: MessageReader): void {
    const portalName = r.cstr();
    const statement = this.statements.get(r.cstr());
    if (!statement) throw new AppError('invalid', 'prepared statement does not exist');
    const formats = Array.from({ length: r.int16() }, () => r.int16());
    const count = r.int16();
    const params: BoundParam[] = [];
    for (let i = 0; i < count; i++) {
      const len = r.int32();
      const oid = statement.paramOids[i] ?? 0;
      const format = formats.length === 1 ? formats[0]! : (formats[i] ?? 0);
      const raw = len < 0 ? null : r.bytes(len);
      const text = raw === null ? null : format === 1 ? binaryParamText(oid, raw) : Buffer.from(raw).toString('utf8');
      params.push({ text, type: duckTypeOfParam(oid) });
    }
    const resultFormats = Array.from({ length: r.int16() }, () => r.int16());
    this.portals.set(portalName, { statement, params, resultFormats, sent: 0 });
    this.out.begin('2').end();
  }

  private async describe(r: MessageReader): Promise<void> {
    const what = String.fromCharCode(r.bytes(1)[0]!);
    const name = r.cstr();
    if (what === 'S') {
      const st = this.statements.get(name);
      if (!st) throw new AppError('invalid', `prepared statement "${name}" does not exist`);
      const count = st.local ? st.paramOids.length : Math.max(st.paramOids.length, await this.deps.queries.parameterCount(st.sql));
      this.out.begin('t').int16(count);
      for (let i = 0; i < count; i++) this.out.int32(st.paramOids[i] || OID.text);
      this.out.end();
      if (st.local && st.local.kind !== 'show') return void this.out.begin('n').end();
      // The columns come from DuckDB's prepare of the statement with every parameter NULL: nothing runs
      // (a client that describes before it binds, as pgx does, would otherwise run each query twice).
      st.described ??= (await this.resultOf(st, Array.from({ length: count }, (_, i) => ({ text: null, type: duckTypeOfParam(st.paramOids[i] ?? 0) })), true)).columns;
      return this.rowDescription(st.described, [0]);
    }
    const portal = this.portals.get(name);
    if (!portal) throw new AppError('invalid', `portal "${name}" does not exist`);
    if (portal.statement.local && portal.statement.local.kind !== 'show') return void this.out.begin('n').end();
    await this.run(portal);
    this.rowDescription(portal.result!.columns, portal.resultFormats);
  }

  private async execute(r: MessageReader): Promise<void> {
    const portal = this.portals.get(r.cstr());
    if (!portal) throw new AppError('invalid', 'portal does not exist');
    const max = r.int32();
    if (portal.statement.local?.kind === 'empty') return void this.out.begin('I').end();
    await this.run(portal);
    this.sendRows(portal, max);
    this.flush();
  }

  private closeObject(r: MessageReader): void {
    const what = String.fromCharCode(r.bytes(1)[0]!);
    const name = r.cstr();
    (what === 'S' ? this.statements : this.portals).delete(name);
    this.out.begin('3').end();
  }

  // --- running statements ---

  private statementOf(sql: string, paramOids: number[]): Statement {
    return { sql, paramOids, local: localCommand(sql, (n) => this.settings.has(n)) };
  }

  /** Runs the portal once (local commands apply here); its result stays for Execute to page through. */
  private async run(portal: Portal): Promise<void> {
    if (portal.result || portal.statement.local?.kind === 'tag' || portal.statement.local?.kind === 'set') {
      if (!portal.result) this.applyLocal(portal.statement.local!);
      return;
    }
    portal.result = await this.resultOf(portal.statement, portal.params);
  }

  private applyLocal(cmd: LocalCommand): void {
    if (cmd.kind !== 'set') return;
    if (cmd.name !== 'all') {
      this.settings.set(cmd.name, cmd.value ?? DEFAULT_SETTINGS.find(([k]) => k === cmd.name)?.[1] ?? '');
      return;
    }
    for (const [k, v] of DEFAULT_SETTINGS) if (v) this.settings.set(k, v);
  }

  private async resultOf(st: Statement, params: BoundParam[], describeOnly = false): Promise<Result> {
    if (st.local?.kind === 'show') {
      const value = st.local.name === 'all' ? null : (this.settings.get(st.local.name) ?? '');
      const rows = value === null ? [...this.settings].map(([k, v]) => [k, v]) : [[value]];
      const textColumn = (name: string): ResultColumn => ({ name, type: 'VARCHAR', kind: { k: 'varchar' } }) as ResultColumn;
      return { columns: value === null ? [textColumn('name'), textColumn('setting')] : [textColumn(st.local.name)], rows };
    }
    const controller = new AbortController();
    this.running = controller;
    const started = performance.now();
    let status = 500;
    try {
      const p = this.principal;
      const origin = { source: 'pgwire', format: 'pgwire', tokenId: p?.tokenId ?? null, tokenName: p?.name ?? null, isAdmin: p?.isAdmin ?? true, clientIp: this.deps.clientIp };
      const access = this.deps.authorizer.accessFor(p);
      const out = await this.deps.queries.execute({ sql: st.sql, database: this.database, access, origin, signal: controller.signal, params, session: this.querySession(), describeOnly }, async (columns, next) => {
        const rows: unknown[][] = [];
        for (let chunk = await next(); chunk; chunk = await next()) {
          for (const row of chunk.node.getRows()) rows.push(row);
          chunk.release();
        }
        return { rowCount: rows.length, rows };
      });
      status = 200;
      return { columns: out.columns, rows: out.result.rows };
    } catch (err) {
      if (err instanceof AppError) status = err.status;
      if (controller.signal.aborted) throw new AppError('invalid', 'canceling statement due to user request', { extra: { sqlstate: '57014' } });
      throw err;
    } finally {
      this.running = null;
      // Audited as the same statement sent to POST /api/v1/query would be.
      if (!describeOnly && this.deps.audit?.wants('POST', status, '/api/v1/query')) this.audit('query.run', status, this.principal, started);
    }
  }

  /** One audit event of this session; the user name is the client's own (shownUser). */
  private audit(action: string, status: number, principal: Principal | null, started: number): void {
    this.deps.audit?.record({
      service: 'pgwire',
      timeMs: Date.now(),
      tokenId: principal?.tokenId ?? null,
      tokenName: principal?.name ?? null,
      clientIp: this.deps.clientIp,
      method: 'PGWIRE',
      path: '/pgwire',
      status,
      durationMs: performance.now() - started,
      database: this.database || null,
      action,
      detail: { user: this.shownUser },
    });
  }

  /** The client's user name as messages and events show it: replaced when it looks like a token (one sent in the wrong field). */
  private get shownUser(): string {
    return looksSecret(this.user) ? REDACTED : this.user;
  }

  private querySession(): QuerySession {
    return {
      user: this.user,
      database: this.database,
      version: `PostgreSQL ${this.deps.serverVersion} (svc ${this.deps.svcVersion})`,
      settings: this.settings,
      backendPid: this.pid,
    };
  }

  // --- result messages ---

  private rowDescription(columns: ResultColumn[], formats: number[]): void {
    this.out.begin('T').int16(columns.length);
    columns.forEach((c, i) => {
      const oid = oidOf(c);
      this.out.cstr(c.name).int32(0).int16(0).int32(oid).int16(typeSize(oid)).int32(-1).int16(formatOf(formats, i));
    });
    this.out.end();
  }

  private sendRows(portal: Portal, max: number): void {
    const local = portal.statement.local;
    if (local && local.kind !== 'show') {
      this.out.begin('C').cstr(local.kind === 'set' ? (local.value === null ? 'RESET' : 'SET') : local.kind === 'tag' ? local.tag : '').end();
      return;
    }
    const { columns, rows } = portal.result!;
    const oids = columns.map(oidOf);
    const end = max > 0 ? Math.min(rows.length, portal.sent + max) : rows.length;
    for (let r = portal.sent; r < end; r++) {
      const row = rows[r]!;
      this.out.begin('D').int16(columns.length);
      for (let i = 0; i < columns.length; i++) {
        const v = row[i];
        if (v === null || v === undefined) {
          this.out.int32(-1);
          continue;
        }
        const bytes = formatOf(portal.resultFormats, i) === 1 ? binaryValue(oids[i]!, v) : textValue(oids[i]!, v);
        if (bytes === null) throw new AppError('invalid', `cannot send column "${columns[i]!.name}" in binary format`);
        this.out.value(bytes);
      }
      this.out.end();
      if (this.out.size > 256 * 1024) this.flush();
    }
    portal.sent = end;
    if (end < rows.length) this.out.begin('s').end();
    else this.out.begin('C').cstr(`SELECT ${rows.length}`).end();
  }

  private queryError(err: unknown): void {
    const e = err instanceof AppError ? err : null;
    const message = (err as Error).message ?? String(err);
    const code = (e?.extra?.sqlstate as string | undefined) ?? sqlstateOf(e?.kind, message);
    this.error(code, message, 'ERROR');
  }

  /** One ErrorResponse; token-shaped words of the message (a quoted SQL literal, say) are redacted. */
  private error(code: string, message: string, severity: 'ERROR' | 'FATAL'): void {
    this.out.begin('E').int8(0x53).cstr(severity).int8(0x56).cstr(severity).int8(0x43).cstr(code).int8(0x4d).cstr(scrubText(message)).int8(0).end();
  }
}

const formatOf = (formats: number[], i: number) => (formats.length === 0 ? 0 : formats.length === 1 ? formats[0]! : (formats[i] ?? 0));

/** `14.0` -> `140000`. */
function serverVersionNum(v: string): string {
  const [major = 0, minor = 0] = v.split('.').map(Number);
  return String(major * 10000 + minor);
}

/** The SQLSTATE of a query failure. */
function sqlstateOf(kind: string | undefined, message: string): string {
  if (kind === 'timeout') return '57014';
  if (kind === 'forbidden') return '42501';
  if (kind === 'unavailable') return '53300';
  // A governance limit (HTTP 429): configuration_limit_exceeded, which clients report without retrying.
  if (kind === 'rate_limited') return '53400';
  if (/^Parser Error/i.test(message)) return '42601';
  if (/^Catalog Error/i.test(message) || /does not exist/i.test(message)) return '42P01';
  if (/^Binder Error/i.test(message)) return '42703';
  if (kind === 'invalid') return '42000';
  return 'XX000';
}
