import { describe, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSecretKey, SecretBox } from './secret-box.ts';

describe('secret box', () => {
  const box = new SecretBox(Buffer.alloc(32, 7));

  test('round trip; ciphertext differs each time and hides the plaintext', () => {
    const a = box.seal('hunter2-password', 'id1');
    const b = box.seal('hunter2-password', 'id1');
    expect(a).not.toBe(b);
    expect(a).not.toContain('hunter2');
    expect(box.open(a, 'id1')).toBe('hunter2-password');
  });

  test('another key, another record id or a changed byte does not decrypt', () => {
    const sealed = box.seal('pw', 'id1');
    expect(() => new SecretBox(Buffer.alloc(32, 8)).open(sealed, 'id1')).toThrow('cannot decrypt');
    expect(() => box.open(sealed, 'id2')).toThrow('cannot decrypt');
    const parts = sealed.split(':');
    parts[3] = Buffer.from('xx').toString('base64');
    expect(() => box.open(parts.join(':'), 'id1')).toThrow('cannot decrypt');
  });

  test('key from config must be 32 bytes of base64', () => {
    expect(loadSecretKey(Buffer.alloc(32, 1).toString('base64'), null).source).toBe('config');
    expect(() => loadSecretKey('c2hvcnQ=', null)).toThrow('mqtt.encryption_key');
  });

  test('key file is created 0600, reused, and tightened when readable by others', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'svc-key-')), 'sub', 'secret.key');
    const first = loadSecretKey('', file);
    expect(first.source).toBe('key-file-created');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const again = loadSecretKey('', file);
    expect(again.source).toBe('key-file');
    expect(again.key.equals(first.key)).toBe(true);
    chmodSync(file, 0o644);
    loadSecretKey('', file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    writeFileSync(file, 'garbage');
    expect(() => loadSecretKey('', file)).toThrow('does not hold');
    expect(readFileSync(file, 'utf8')).toBe('garbage');
  });
});
