const UNITS: Record<string, number> = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3, TB: 1024 ** 4 };

/** Parses `512MB`, `1GB`, `100 KB`, `10B` (binary multiples). Returns null for anything else, including bare numbers and percents. */
export function parseSize(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|TB)\s*$/i.exec(text);
  if (!m) return null;
  const bytes = Number(m[1]) * UNITS[m[2]!.toUpperCase()]!;
  return Number.isFinite(bytes) ? Math.floor(bytes) : null;
}

/** Formats a byte count for people: `1.5 MB`. */
export function formatSize(bytes: number): string {
  const order = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  let v = bytes;
  while (v >= 1024 && i < order.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${order[i]}`;
}
