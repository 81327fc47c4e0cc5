import { expect, test } from 'bun:test';
import { UNRESTRICTED, type TableAccess } from '../../lib/table-access.ts';
import { jobVisible, readableErrors, readableErrorText } from './job-visibility.ts';

const onlyDb1: TableAccess = { allows: (_a, d) => d === 'db1', allowsDatabase: (_a, d) => d === 'db1', ownsSystemDatabase: () => false };
const errors = ['db1/cpu/2023/11/14/22: cannot read file; it is gone', 'db2/mem/2023/11/14/22: disk full', 'db1/cpu_hot/2023/11/14/23: x'];

test('jobs of a database the caller may not read are hidden; jobs over every database are shown', () => {
  expect(jobVisible(onlyDb1, { database: 'db1', measurement: null })).toBe(true);
  expect(jobVisible(onlyDb1, { database: 'db2', measurement: 'mem' })).toBe(false);
  expect(jobVisible(onlyDb1, { database: null, measurement: null })).toBe(true);
});

test('partition errors are cut to readable partitions, also in the joined text (whose messages may hold "; ")', () => {
  expect(readableErrors(onlyDb1, errors)).toEqual([errors[0], errors[2]]);
  expect(readableErrors(UNRESTRICTED, errors)).toEqual(errors);
  expect(readableErrorText(onlyDb1, errors.join('; '))).toBe(`${errors[0]}; ${errors[2]}`);
  expect(readableErrorText(onlyDb1, errors[1]!)).toBeNull();
  expect(readableErrorText(onlyDb1, 'something without a partition')).toBeNull();
  expect(readableErrorText(UNRESTRICTED, errors.join('; '))).toBe(errors.join('; '));
});
