/**
 * The series a remote-write sender keeps sending, remembered by the raw bytes of their labels.
 * Prometheus repeats every series' full label set in every request, so the costly part of a request
 * (decoding label strings, mapping them to tag columns and dictionary entries) is done once per series
 * per process: afterwards a series is one hash and one byte comparison of its label bytes.
 *
 * Ids handed out are small integers into flat arrays: series -> metric id and label pairs; pair ->
 * tag-name id and value string. The table starts over (every id void) when it grows past its bounds,
 * which callers only allow between requests (`startRequest`), so ids stay valid for one request.
 */

/** Past these, the table starts over at the next request (memory stays bounded; a working set larger than this is decoded again). */
export interface SeriesTableLimits {
  maxSeries: number;
  maxKeyBytes: number;
  maxPairs: number;
}
const LIMITS: SeriesTableLimits = { maxSeries: 1 << 20, maxKeyBytes: 128 << 20, maxPairs: 1 << 21 };

/**
 * MurmurHash3 (x86, 32-bit) of bytes [start, end): four bytes per step, about twice as fast as a
 * byte-wise FNV over label sets of ~100 bytes, and well mixed in the low bits the table indexes by.
 */
export function hashKey(b: Uint8Array, start: number, end: number): number {
  let h = 0x9747b28c;
  let i = start;
  for (; i + 4 <= end; i += 4) {
    let k = b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24);
    k = Math.imul(k, 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    h ^= Math.imul(k, 0x1b873593);
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  let k = 0;
  switch (end - i) {
    case 3:
      k ^= b[i + 2]! << 16;
    // falls through
    case 2:
      k ^= b[i + 1]! << 8;
    // falls through
    case 1:
      k ^= b[i]!;
      k = Math.imul(k, 0xcc9e2d51);
      k = (k << 15) | (k >>> 17);
      h ^= Math.imul(k, 0x1b873593);
  }
  h ^= end - start;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

function grownInt32(a: Int32Array<ArrayBuffer>, min: number): Int32Array<ArrayBuffer> {
  let size = a.length;
  while (size < min) size *= 2;
  if (size === a.length) return a;
  const b = new Int32Array(size);
  b.set(a);
  return b;
}

export class SeriesTable {
  /** Open addressing: slot -> series id + 1 (0 empty), and the key hash for a cheap first test. */
  private slots = new Int32Array(1 << 12);
  private slotHash = new Int32Array(1 << 12);
  /** Label bytes of every series, back to back. */
  private keys = new Uint8Array(1 << 16);
  private keysUsed = 0;
  private keyStart = new Int32Array(1 << 10);
  private keyLength = new Int32Array(1 << 10);

  /** Series id -> metric id, and its label pairs as a run [pairStart, pairStart + pairCount) of `pairList`. */
  seriesMetric = new Int32Array(1 << 10);
  seriesPairStart = new Int32Array(1 << 10);
  seriesPairCount = new Int32Array(1 << 10);
  /** Series id -> shape id: the list of its tag-name ids (series of one metric usually share one). */
  seriesShape = new Int32Array(1 << 10);
  /** Series id -> the series that followed it in the last request it was in (-1: none yet): the parser's first guess. */
  successor = new Int32Array(1 << 10);
  shapes: number[][] = [];
  private readonly shapeIds = new Map<string, number>();
  pairList = new Int32Array(1 << 12);
  private pairListUsed = 0;
  series = 0;

  /** Pair id -> tag-name id and value. */
  pairName = new Int32Array(1 << 10);
  pairValue: string[] = [];
  private readonly pairIds = new Map<string, number>();

  /** Tag-name id -> column name; metric id -> measurement name. */
  names: string[] = [];
  private readonly nameIds = new Map<string, number>();
  metrics: string[] = [];
  private readonly metricIds = new Map<string, number>();

  /** Bumped when the table starts over. */
  epoch = 0;
  private readonly limits: SeriesTableLimits;

  constructor(limits: Partial<SeriesTableLimits> = {}) {
    this.limits = { ...LIMITS, ...limits };
  }

  /** Called before each request: starts over when the previous requests filled the table. */
  startRequest(): void {
    const { maxSeries, maxKeyBytes, maxPairs } = this.limits;
    if (this.series > maxSeries || this.keysUsed > maxKeyBytes || this.pairValue.length > maxPairs) this.clear();
  }

  /** The id of the series whose label bytes are `buf[start, end)` (`hashKey` of them: `hash`), or -1. */
  find(buf: Uint8Array, start: number, end: number, hash: number): number {
    const len = end - start;
    const mask = this.slots.length - 1;
    const keys = this.keys;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const id = this.slots[slot]! - 1;
      if (id < 0) return -1;
      if (this.slotHash[slot] !== hash || this.keyLength[id] !== len) continue;
      const k = this.keyStart[id]!;
      let i = 0;
      while (i < len && keys[k + i] === buf[start + i]) i++;
      if (i === len) return id;
    }
  }

  /** Whether series `id` has exactly the label bytes `buf[start, end)`. */
  matches(id: number, buf: Uint8Array, start: number, end: number): boolean {
    const len = end - start;
    if (this.keyLength[id] !== len) return false;
    const keys = this.keys;
    const k = this.keyStart[id]! - start;
    for (let i = start; i < end; i++) if (keys[k + i] !== buf[i]) return false;
    return true;
  }

  /** Adds a series (not present: `find` said -1) with its metric and label pairs; returns its id. */
  add(buf: Uint8Array, start: number, end: number, hash: number, metric: string, labels: readonly string[]): number {
    const id = this.series++;
    if (id >= this.seriesMetric.length) {
      const size = id + 1;
      this.keyStart = grownInt32(this.keyStart, size);
      this.keyLength = grownInt32(this.keyLength, size);
      this.seriesMetric = grownInt32(this.seriesMetric, size);
      this.seriesPairStart = grownInt32(this.seriesPairStart, size);
      this.seriesPairCount = grownInt32(this.seriesPairCount, size);
      this.seriesShape = grownInt32(this.seriesShape, size);
      this.successor = grownInt32(this.successor, size);
    }
    const len = end - start;
    if (this.keysUsed + len > this.keys.length) {
      let size = this.keys.length;
      while (size < this.keysUsed + len) size *= 2;
      const keys = new Uint8Array(size);
      keys.set(this.keys.subarray(0, this.keysUsed));
      this.keys = keys;
    }
    this.keys.set(buf.subarray(start, end), this.keysUsed);
    this.successor[id] = -1;
    this.keyStart[id] = this.keysUsed;
    this.keyLength[id] = len;
    this.keysUsed += len;

    this.seriesMetric[id] = this.idOf(this.metricIds, this.metrics, metric);
    const pairs = labels.length >> 1;
    this.pairList = grownInt32(this.pairList, this.pairListUsed + pairs);
    this.seriesPairStart[id] = this.pairListUsed;
    this.seriesPairCount[id] = pairs;
    const shape: number[] = [];
    for (let i = 0; i < labels.length; i += 2) {
      const pair = this.pairOf(labels[i]!, labels[i + 1]!);
      this.pairList[this.pairListUsed++] = pair;
      shape.push(this.pairName[pair]!);
    }
    const shapeKey = shape.join(',');
    let shapeId = this.shapeIds.get(shapeKey);
    if (shapeId === undefined) this.shapeIds.set(shapeKey, (shapeId = this.shapes.push(shape) - 1));
    this.seriesShape[id] = shapeId;

    if (this.series * 2 > this.slots.length) this.rehash(this.slots.length * 2);
    this.insert(id, hash);
    return id;
  }

  private idOf(ids: Map<string, number>, list: string[], key: string): number {
    let id = ids.get(key);
    if (id === undefined) ids.set(key, (id = list.push(key) - 1));
    return id;
  }

  private pairOf(name: string, value: string): number {
    const nameId = this.idOf(this.nameIds, this.names, name);
    const key = `${nameId}\u0000${value}`;
    let id = this.pairIds.get(key);
    if (id === undefined) {
      id = this.pairValue.push(value) - 1;
      this.pairIds.set(key, id);
      this.pairName = grownInt32(this.pairName, id + 1);
      this.pairName[id] = nameId;
    }
    return id;
  }

  private insert(id: number, hash: number): void {
    const mask = this.slots.length - 1;
    let slot = hash & mask;
    while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
    this.slots[slot] = id + 1;
    this.slotHash[slot] = hash;
  }

  private rehash(size: number): void {
    this.slots = new Int32Array(size);
    this.slotHash = new Int32Array(size);
    for (let id = 0; id < this.series; id++) {
      const k = this.keyStart[id]!;
      this.insert(id, hashKey(this.keys, k, k + this.keyLength[id]!));
    }
  }

  private clear(): void {
    this.epoch++;
    this.slots = new Int32Array(1 << 12);
    this.slotHash = new Int32Array(1 << 12);
    this.keys = new Uint8Array(1 << 16);
    this.keysUsed = 0;
    this.series = 0;
    this.pairListUsed = 0;
    this.pairValue = [];
    this.pairIds.clear();
    this.names = [];
    this.nameIds.clear();
    this.metrics = [];
    this.metricIds.clear();
    this.shapes = [];
    this.shapeIds.clear();
  }
}
