import { describe, expect, test } from 'bun:test';
import { isLoopbackHost, isTruthy, parseListenAddr, planDiagnostics } from './diagnostics-config.ts';

describe('diagnostics config', () => {
  test('the switch accepts 1, true, yes, on in any case and nothing else', () => {
    for (const v of ['1', 'true', 'YES', ' on ']) expect(isTruthy(v)).toBe(true);
    for (const v of [undefined, '', '0', 'false', 'enabled', 'y']) expect(isTruthy(v)).toBe(false);
  });

  test('addresses: host:port, [v6]:port, :port', () => {
    expect(parseListenAddr('127.0.0.1:6060')).toEqual({ host: '127.0.0.1', port: 6060 });
    expect(parseListenAddr('[::1]:7000')).toEqual({ host: '::1', port: 7000 });
    expect(parseListenAddr(':6060')).toEqual({ host: '0.0.0.0', port: 6060 });
    for (const bad of ['127.0.0.1', '127.0.0.1:', 'host:70000', '::1:6060', 'a:b']) expect(parseListenAddr(bad)).toBeNull();
  });

  test('loopback: 127.0.0.0/8, ::1 and localhost only', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1', 'localhost', 'LOCALHOST']) expect(isLoopbackHost(h)).toBe(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', '128.0.0.1', '127.0.0.256', 'example.com', 'localhost.example.com']) expect(isLoopbackHost(h)).toBe(false);
  });

  test('plans: off, default loopback, refused non-loopback unless allowed, refused malformed', () => {
    expect(planDiagnostics({})).toEqual({ kind: 'off' });
    expect(planDiagnostics({ SVC_DEBUG_PPROF: 'no', SVC_DEBUG_PPROF_ADDR: '127.0.0.1:1' })).toEqual({ kind: 'off' });
    expect(planDiagnostics({ SVC_DEBUG_PPROF: '1' })).toEqual({ kind: 'listen', addr: '127.0.0.1:6060', host: '127.0.0.1', port: 6060 });
    expect(planDiagnostics({ SVC_DEBUG_PPROF: '1', SVC_DEBUG_PPROF_ADDR: '0.0.0.0:6060' }).kind).toBe('refused');
    expect(planDiagnostics({ SVC_DEBUG_PPROF: '1', SVC_DEBUG_PPROF_ADDR: '0.0.0.0:6060', SVC_DEBUG_PPROF_ALLOW_NON_LOOPBACK: 'false' }).kind).toBe('refused');
    expect(planDiagnostics({ SVC_DEBUG_PPROF: '1', SVC_DEBUG_PPROF_ADDR: '0.0.0.0:6060', SVC_DEBUG_PPROF_ALLOW_NON_LOOPBACK: 'yes' })).toEqual({
      kind: 'listen',
      addr: '0.0.0.0:6060',
      host: '0.0.0.0',
      port: 6060,
    });
    const malformed = planDiagnostics({ SVC_DEBUG_PPROF: '1', SVC_DEBUG_PPROF_ADDR: 'localhost' });
    expect(malformed.kind).toBe('refused');
  });
});
