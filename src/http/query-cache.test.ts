import { expect, test } from 'bun:test';
import { Hono, type Context } from 'hono';
import { AppError } from '../lib/errors.ts';
import { readQuery } from './body.ts';
import { cachedQueryReader, rawQueryOf } from './query-cache.ts';
import { precisionQuery } from './routes/ingest-route.ts';

/** What a reader answers for `query`: the JSON of its output, or the error's status and message. */
async function answer(read: (c: Context) => unknown, query: string): Promise<string> {
  const app = new Hono();
  app.onError((err, c) => c.text(err instanceof AppError ? `${err.status} ${err.message}` : `not an AppError: ${err.message}`));
  app.get('/w', (c) => c.text(JSON.stringify(read(c))));
  return (await app.request(`/w${query === '' ? '' : `?${query}`}`)).text();
}

const KEYS = ['precision', 'db', 'rp', 'bucket', 'Precision', 'precision%20', 'pre%63ision', 'u', 'p', '', 'x[]'];
const VALUES = ['ns', 'n', 'us', 'u', 'µs', '%C2%B5s', 'ms', 's', 'h', 'm', '', 'NS', 'n%73', '%6Es', '+ns', 'ns+', '%', '%zz', '=', 'telegraf', 'a/b'];

/** A random query string: 0-4 parameters from KEYS and VALUES, sometimes without `=`, sometimes with stray `&`. */
function fuzzQuery(rand: () => number): string {
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!;
  const parts: string[] = [];
  for (let n = Math.floor(rand() * 5); n > 0; n--) parts.push(rand() < 0.1 ? pick(KEYS) : `${pick(KEYS)}=${pick(VALUES)}`);
  if (rand() < 0.1) parts.push('');
  return parts.join('&');
}

/** A small seeded generator, so a failure can be replayed. */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

test('the cached reader answers every fuzzed query string exactly as the zod schema does, first time and cached', async () => {
  const cached = cachedQueryReader(precisionQuery, 64);
  const rand = seeded(20261126);
  const queries = Array.from({ length: 600 }, () => fuzzQuery(rand));
  let refused = 0;
  for (const q of [...queries, ...queries.slice(0, 200)]) {
    const expected = await answer((c) => readQuery(c, precisionQuery), q);
    if (expected.startsWith('400')) refused++;
    expect(`${q} -> ${await answer(cached, q)}`).toBe(`${q} -> ${expected}`);
    expect(`${q} -> ${await answer(cached, q)}`).toBe(`${q} -> ${expected}`);
  }
  // The fuzz covers both outcomes.
  expect(refused).toBeGreaterThan(20);
  expect(refused).toBeLessThan(700);
});

test('a cached output cannot be changed by one request for the next', async () => {
  const cached = cachedQueryReader(precisionQuery);
  expect(await answer((c) => Object.isFrozen(cached(c)), 'precision=ms')).toBe('true');
  expect(await answer(cached, 'precision=ms')).toBe('{"precision":"ms"}');
});

test('rawQueryOf is what follows the first ?', () => {
  expect(rawQueryOf('http://h/w')).toBe('');
  expect(rawQueryOf('http://h/w?')).toBe('');
  expect(rawQueryOf('http://h/w?a=1&b=?')).toBe('a=1&b=?');
});
