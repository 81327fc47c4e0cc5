import { z } from 'zod';
import { bool, duration, int, size, str } from '../fields.ts';

/** [server]: the time-series HTTP listener. */
export const serverSection = z.object({
  host: str('0.0.0.0', 'Address the time-series service listens on'),
  port: int(8000, 'Port of the time-series service', 0, 65535),
  max_payload_size: size('1GB', 'Largest accepted request body (after decompression); larger bodies get 413'),
  max_inflight_body_size: size('', 'Memory all request bodies being read may hold together (received and decompressed); empty: a quarter of RAM. Over it: 503 with Retry-After', true),
  shutdown_timeout: duration('30s', 'How long a graceful shutdown may take before unfinished flushes are abandoned'),
  write_timeout: duration('30s', 'Longest time to produce a response; raised to query.timeout when that is larger'),
  tls_enabled: bool(false, 'Serve HTTPS natively'),
  tls_cert_file: str('', 'PEM certificate file when tls_enabled'),
  tls_key_file: str('', 'PEM private key file when tls_enabled'),
  storage_credentials_fail_ready: bool(false, 'Make /ready answer 503 when storage credentials are expired'),
  retain_freed_memory: bool(true, 'Keep memory the allocator freed for reuse instead of handing it back to the OS (serve restarts its own process image once at start with MIMALLOC_PURGE_DELAY=-1 unless that is set; Linux). Faster ingest, resident memory stays near its peak'),
});
