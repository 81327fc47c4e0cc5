import { expect, test } from 'bun:test';
import { conjuncts, parseTreeJson, treeJson } from './tree.ts';

test('integers beyond 2^53 survive the JS round trip; strings and floats are untouched', () => {
  const text = '{"error":false,"statements":[{"node":{"a":9007199254740993,"b":-9007199254740993,"c":18446744073709551615,"d":"12345678901234567890","e":0.25,"f":12,"g":"x\\"9007199254740993"}}]}';
  const tree = parseTreeJson(text);
  expect(treeJson(tree)).toBe(text);
  expect(tree.statements[0]!.node.d).toBe('12345678901234567890');
});

test('conjuncts flattens nested ANDs only', () => {
  const leaf = (n: number) => ({ class: 'CONSTANT', n });
  const and = (...children: unknown[]) => ({ class: 'CONJUNCTION', type: 'CONJUNCTION_AND', children });
  const or = { class: 'CONJUNCTION', type: 'CONJUNCTION_OR', children: [leaf(9), leaf(8)] };
  expect(conjuncts(and(leaf(1), and(leaf(2), or)))).toEqual([leaf(1), leaf(2), or]);
  expect(conjuncts(null)).toEqual([]);
});
