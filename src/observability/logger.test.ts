import { expect, test } from 'bun:test';
import { Logger } from './logger.ts';

const TOKEN = 'svc_Q2x9vR4tLm8ZpW1sKd7YhB3nFc6JgA0eXuT5oIy-_qM';
const KEY = 'svcm_b7Hk2Lp9Qr4Ws8Xt1Yz6Ac3Df5Gh0Jk_-MnPqRsTu';

test('the sink scrubs token-shaped values in the message and in structured fields, on both outputs', () => {
  const lines: string[] = [];
  for (const format of ['json', 'text'] as const) {
    const logger = new Logger({ level: 'debug', format, bufferSize: 10, write: (l) => lines.push(l) }).child({ component: 'pgwire' });
    logger.warn(`pgwire connection failed: unsupported SASL mechanism ${TOKEN}`, {
      error: `password=${TOKEN}`,
      nested: { header: `Bearer ${TOKEN}`, keys: [KEY, 'plain'] },
      err: new Error(`cannot use key ${KEY}`),
      // No known prefix, but long and random: the audit log's rule for opaque values.
      opaque: 'secret k9F2mQ7xL4pR8sT1vW6yZ3bC5dG0hJ-_aE2iN7oU4q',
    });
    const [entry] = logger.recent({ limit: 1 });
    expect(entry).toMatchObject({
      msg: 'pgwire connection failed: unsupported SASL mechanism [redacted]',
      component: 'pgwire',
      error: 'password=[redacted]',
      nested: { header: 'Bearer [redacted]', keys: ['[redacted]', 'plain'] },
      err: 'cannot use key [redacted]',
      opaque: 'secret [redacted]',
    });
  }
  expect(lines).toHaveLength(2);
  for (const line of lines) {
    expect(line).not.toContain(TOKEN);
    expect(line).not.toContain(KEY);
    expect(line).toContain('[redacted]');
  }
});

test('ordinary values pass unchanged: names, paths, file names, numbers', () => {
  const logger = new Logger({ level: 'info', format: 'json', bufferSize: 10, write: () => {} });
  const fields = {
    partition: 'telemetry_measurements/temperature_readings/2023/11/14/22',
    file: 'temperature_readings_20231114_220000_123456789.parquet',
    token: 'grafana-dashboards',
    rows: 12,
    ok: true,
  };
  logger.info('compaction left a partition as it is', fields);
  expect(logger.recent({ limit: 1 })[0]).toMatchObject({ msg: 'compaction left a partition as it is', ...fields });
});
