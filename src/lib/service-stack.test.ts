import { expect, test } from 'bun:test';
import { ServiceStack } from './service-stack.ts';

test('parts stop in reverse start order; a failing stop is reported and the rest still stop', async () => {
  const log: string[] = [];
  const failures: string[] = [];
  const stack = new ServiceStack((name) => failures.push(name));
  stack.add('catalog', () => log.push('stop catalog'));
  await stack.start({ name: 'buffers', start: () => log.push('start buffers'), stop: () => log.push('stop buffers') });
  stack.add('broken', () => {
    throw new Error('boom');
  });
  await stack.start({ name: 'http', start: async () => log.push('start http'), stop: async () => log.push('stop http') });
  expect(stack.names()).toEqual(['catalog', 'buffers', 'broken', 'http']);
  await stack.stopAll();
  expect(log).toEqual(['start buffers', 'start http', 'stop http', 'stop buffers', 'stop catalog']);
  expect(failures).toEqual(['broken']);
  expect(stack.names()).toEqual([]);
});
