/**
 * Micro-benchmark of the MessagePack write parser: a 10,000-row columnar batch (time, host of 100
 * values, region of 10, five float fields), compared with a generic msgpackr decode of the same bytes.
 * Run: bun bench/msgpack-parse.bench.ts [rows] [iterations]
 */
import { Packr, Unpackr } from 'msgpackr';
import { parseMsgpackWrite } from '../src/ingest/msgpack/index.ts';

const rows = Number(process.argv[2] ?? 10_000);
const iterations = Number(process.argv[3] ?? 500);

function columnarBody(): Uint8Array {
  const time: number[] = [];
  const host: string[] = [];
  const region: string[] = [];
  const fields: number[][] = [[], [], [], [], []];
  for (let i = 0; i < rows; i++) {
    time.push(1_700_000_000_000 + i);
    host.push(`host_${i % 100}`);
    region.push(`region_${i % 10}`);
    for (let f = 0; f < 5; f++) fields[f].push(Math.random() * 100 + 0.5);
  }
  const [usage_user, usage_system, usage_idle, io_wait, load] = fields;
  const payload = { m: 'cpu', columns: { time, host, region, usage_user, usage_system, usage_idle, io_wait, load } };
  return new Packr({ useRecords: false }).pack(payload);
}

function rowBody(): Uint8Array {
  const items: unknown[] = [];
  for (let i = 0; i < rows; i++) {
    items.push({ m: 'cpu', t: 1_700_000_000_000 + i, tags: { host: `host_${i % 100}` }, fields: { usage: Math.random() * 100 + 0.5, n: i } });
  }
  return new Packr({ useRecords: false }).pack(items);
}

function measure(name: string, body: Uint8Array, run: () => unknown): void {
  for (let i = 0; i < 50; i++) run(); // warm up the JIT
  const rates: number[] = [];
  for (let round = 0; round < 5; round++) {
    const started = performance.now();
    for (let i = 0; i < iterations / 5; i++) run();
    const seconds = (performance.now() - started) / 1000;
    rates.push((rows * (iterations / 5)) / seconds);
  }
  rates.sort((a, b) => a - b);
  console.log(`${name.padEnd(34)} ${(rates[2] / 1e6).toFixed(2)} M rows/s (best ${(rates[4] / 1e6).toFixed(2)}), body ${(body.length / 1024).toFixed(0)} KiB`);
}

const columnar = columnarBody();
const rowForm = rowBody();
const unpackr = new Unpackr({ mapsAsObjects: true, useRecords: false });
measure('parseMsgpackWrite columnar', columnar, () => parseMsgpackWrite(columnar, { now: 0 }));
measure('msgpackr unpack only (reference)', columnar, () => unpackr.unpack(columnar));
measure('parseMsgpackWrite rows', rowForm, () => parseMsgpackWrite(rowForm, { now: 0 }));
