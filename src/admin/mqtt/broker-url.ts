/** Broker URLs as users write them -> the URL the `mqtt` package connects to. */
import { TLS_SCHEMES } from './subscription-schema.ts';

const PACKAGE_SCHEME: Record<string, string> = { tcp: 'mqtt', mqtt: 'mqtt', ssl: 'mqtts', tls: 'mqtts', mqtts: 'mqtts', ws: 'ws', wss: 'wss' };

/** True when `broker` with `tlsEnabled` connects over TLS. */
export function usesTls(broker: string, tlsEnabled: boolean): boolean {
  return tlsEnabled || TLS_SCHEMES.has(new URL(broker).protocol.replace(/:$/, ''));
}

/**
 * The package's URL for `broker`: tcp -> mqtt, ssl/tls -> mqtts; with `tlsEnabled` a plain scheme is
 * upgraded (mqtt -> mqtts, ws -> wss), since TLS options on a plain socket would be silently ignored.
 */
export function connectionUrl(broker: string, tlsEnabled: boolean): string {
  const url = new URL(broker);
  let scheme = PACKAGE_SCHEME[url.protocol.replace(/:$/, '')] ?? 'mqtt';
  if (tlsEnabled) scheme = scheme === 'ws' ? 'wss' : scheme === 'mqtt' ? 'mqtts' : scheme;
  return `${scheme}://${url.host}${url.pathname === '/' ? '' : url.pathname}${url.search}`;
}
