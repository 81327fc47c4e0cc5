/**
 * JSON doubles have one text form whichever writer made it: DuckDB's (rendered runs, see
 * json-render.ts) or ByteSink.float (every other path). Checked value by value on a corpus of
 * doubles from several distributions, against DuckDB's own JSON writer.
 */
import { expect, test } from 'bun:test';
import { memoryConnection } from '../../../tests/helpers/duckdb.ts';
import { ByteSink } from './byte-sink.ts';

const conn = await memoryConnection();

test('ByteSink.float writes every finite double as DuckDB JSON does', async () => {
  const reader = await conn.runAndReadAll(`
    SELECT x, json_array(x)::VARCHAR AS j FROM (
      SELECT CASE i % 7
        WHEN 0 THEN random() * 100
        WHEN 1 THEN round(random() * 1000, 2)
        WHEN 2 THEN pow(10, random() * 600 - 300)
        WHEN 3 THEN round(random() * 1e6) - 5e5
        WHEN 4 THEN pow(2, floor(random() * 140) - 70)
        WHEN 5 THEN (random() - 0.5) * pow(10, floor(random() * 50) - 25)
        ELSE ['-0.0'::DOUBLE, 0.0, 1e21, 1e-7, 5e-324, 1.7976931348623157e308, 123456789012345678, 0.1][1 + (i // 7) % 8]
      END AS x FROM range(60000) t(i))`);
  let compared = 0;
  for (const [x, j] of reader.getRows() as [number, string][]) {
    const sink = new ByteSink();
    sink.float(x);
    expect(`[${new TextDecoder().decode(sink.toBytes())}]`).toBe(j);
    compared++;
  }
  expect(compared).toBe(60000);
});
