/**
 * Sets `key` in `map` and, past `max` entries, drops the oldest one (a Map iterates in insertion
 * order): the bound of the small caches on the query path, which must never grow with the workload.
 */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value!);
}
