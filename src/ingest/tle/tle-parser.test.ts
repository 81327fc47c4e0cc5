import { describe, expect, test } from 'bun:test';
import { parseTle, TleParser } from './tle-parser.ts';
import { tleChecksum } from './tle-fields.ts';

// The well-known ISS example set (epoch 2008, day 264.51782528), checksums as published.
const ISS = [
  'ISS (ZARYA)',
  '1 25544U 98067A   08264.51782528 -.00002182  00000-0 -11606-4 0  2927',
  '2 25544  51.6416 247.4627 0006703 130.5360 325.0288 15.72125391563537',
];
/** Replaces column 69 with the right checksum digit. */
const fix = (line: string) => line.slice(0, 68) + String(tleChecksum(line));
const values = (r: ReturnType<typeof parseTle>, name: string) => {
  const col = r.batch.columns.get(name)!;
  return Array.from(col.values as ArrayLike<unknown>, (v) => (typeof v === 'bigint' ? Number(v) : v));
};

describe('TLE parser', () => {
  test('checksum: digits summed, minus counts 1, modulo 10', () => {
    expect(tleChecksum(ISS[1]!)).toBe(7);
    expect(tleChecksum(ISS[2]!)).toBe(7);
  });

  test('3-line form: every field in its unit', () => {
    const r = parseTle(ISS.join('\n') + '\n', 'tle');
    expect(r.rejected).toBe(0);
    expect(r.batch.length).toBe(1);
    expect(r.batch.time[0]).toBe(Date.UTC(2008, 8, 20, 12, 25, 40) * 1000 + 104_192);
    expect(values(r, 'satellite_number')).toEqual(['25544']);
    expect(r.batch.columns.get('satellite_number')!.tag).toBe(true);
    expect(values(r, 'name')).toEqual(['ISS (ZARYA)']);
    expect(values(r, 'classification')).toEqual(['U']);
    expect(values(r, 'international_designator')).toEqual(['98067A']);
    expect(values(r, 'mean_motion_dot')).toEqual([-0.00002182]);
    expect(values(r, 'mean_motion_ddot')).toEqual([0]);
    expect(values(r, 'bstar')[0]).toBeCloseTo(-0.11606e-4, 12);
    expect(values(r, 'element_set_number')).toEqual([292]);
    expect(values(r, 'inclination')).toEqual([51.6416]);
    expect(values(r, 'raan')).toEqual([247.4627]);
    expect(values(r, 'eccentricity')).toEqual([0.0006703]);
    expect(values(r, 'arg_of_perigee')).toEqual([130.536]);
    expect(values(r, 'mean_anomaly')).toEqual([325.0288]);
    expect(values(r, 'mean_motion')).toEqual([15.72125391]);
    expect(values(r, 'revolution_number')).toEqual([56353]);
  });

  test('2-line form, `0 NAME` titles, CRLF and blank lines', () => {
    const text = ['', ISS[1], ISS[2], '0 ISS (ZARYA)', ISS[1], ISS[2], ''].join('\r\n');
    const r = parseTle(text, 'tle');
    expect(r.rejected).toBe(0);
    expect(values(r, 'name')).toEqual([null, 'ISS (ZARYA)']);
  });

  test('chunks split anywhere give the same rows', () => {
    const text = [...ISS, ...ISS].join('\n');
    for (const size of [1, 7, 70, 1000]) {
      const p = new TleParser('tle');
      for (let i = 0; i < text.length; i += size) p.push(text.slice(i, i + size));
      const r = p.finish();
      expect(r.batch.length).toBe(2);
      expect(r.rejected).toBe(0);
    }
  });

  test('a bad checksum rejects that set with its line number; the others stay', () => {
    const bad = ISS[2]!.slice(0, 68) + '3';
    const r = parseTle([...ISS, ISS[0], ISS[1], bad, ...ISS].join('\n'), 'tle');
    expect(r.batch.length).toBe(2);
    expect(r.rejected).toBe(1);
    expect(r.errors[0]).toEqual({ line: 6, satellite: '25544', message: 'checksum mismatch on element line 2: column 69 says 3, the line sums to 7' });
  });

  test('structural problems: short line, missing line 2, mismatched numbers, bad field, dangling title', () => {
    const other = fix('2 25545  51.6416 247.4627 0006703 130.5360 325.0288 15.72125391563537');
    const badField = fix('2 25544  51.6416 247.4627 0006703 130.5360 325.0288 15.7212X391563537');
    const r = parseTle([ISS[1]!.slice(0, 60), ISS[2], 'LONELY', ISS[1], ISS[1], other, ISS[1], badField, 'TRAILING'].join('\n'), 'tle');
    expect(r.batch.length).toBe(0);
    expect(r.errors.map((e) => [e.line, e.message])).toEqual([
      [1, 'element line 1 must be 69 characters long, got 60'],
      [4, 'element line 1 is not followed by element line 2'],
      [6, "satellite number '25545' differs from '25544' on element line 1"],
      [8, "cannot read the mean motion from columns 53-63: '15.7212X391'"],
      [9, "title line 'TRAILING' is not followed by an element set"],
    ]);
  });
});
