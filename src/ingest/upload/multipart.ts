/**
 * Streaming multipart/form-data: yields the content of one named part as it arrives, so a 500 MB
 * upload never sits in memory (Request.formData() would buffer all of it). Only the few bytes that
 * might begin a boundary are held back between chunks.
 */
import { invalid } from '../../lib/errors.ts';

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');
const MAX_HEADER_BYTES = 16 * 1024;

/** The boundary of a `multipart/form-data; boundary=...` content type, or null for any other type. */
export function multipartBoundary(contentType: string | undefined): string | null {
  if (!contentType || !/^multipart\/form-data\b/i.test(contentType)) return null;
  const m = /;\s*boundary=(?:"([^"]+)"|([^\s;]+))/i.exec(contentType);
  if (!m) throw invalid('cannot read multipart body: the content type has no boundary parameter');
  return m[1] ?? m[2]!;
}

/** The form field name of a part's headers (`Content-Disposition: form-data; name="..."`), or null. */
function partName(headers: string): string | null {
  const disposition = headers.split('\r\n').find((h) => /^content-disposition\s*:/i.test(h));
  if (!disposition) return null;
  const m = /;\s*name=(?:"((?:[^"\\]|\\.)*)"|([^\s;]+))/i.exec(disposition);
  return m ? (m[1] ?? m[2]!) : null;
}

/** Yields the bytes of the part named `field`; throws AppError invalid when the body has no such part or ends early. */
export async function* multipartPart(source: AsyncIterable<Uint8Array>, boundary: string, field: string): AsyncGenerator<Uint8Array> {
  // Every boundary, the first included, is matched as CRLF--boundary: a CRLF is put in front of the body.
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  let pending: Buffer = CRLF;
  let state: 'preamble' | 'after-delimiter' | 'headers' | 'skip' | 'body' = 'preamble';
  let found = false;
  const iterator = source[Symbol.asyncIterator]();
  for (;;) {
    let progressed = true;
    while (progressed) {
      progressed = false;
      if (state === 'preamble' || state === 'skip') {
        const at = pending.indexOf(delimiter);
        if (at >= 0) {
          pending = pending.subarray(at + delimiter.length);
          state = 'after-delimiter';
          progressed = true;
        } else pending = pending.subarray(Math.max(0, pending.length - delimiter.length + 1));
      } else if (state === 'after-delimiter') {
        if (pending.length < 2) break;
        if (pending[0] === 45 && pending[1] === 45) {
          // The closing delimiter: no more parts.
          if (!found) throw invalid(`cannot read multipart body: it has no field '${field}'`);
          return;
        }
        const eol = pending.indexOf(CRLF);
        if (eol < 0) break;
        pending = pending.subarray(eol + 2);
        state = 'headers';
        progressed = true;
      } else if (state === 'headers') {
        const end = pending.indexOf(HEADER_END);
        const startsEmpty = pending.length >= 2 && pending[0] === 13 && pending[1] === 10;
        if (end < 0 && !startsEmpty) {
          if (pending.length > MAX_HEADER_BYTES) throw invalid('cannot read multipart body: part headers are longer than 16 KB');
          break;
        }
        const headers = startsEmpty ? '' : pending.subarray(0, end).toString('utf8');
        pending = pending.subarray(startsEmpty ? 2 : end + 4);
        const mine: boolean = !found && partName(headers) === field;
        found ||= mine;
        state = mine ? 'body' : 'skip';
        progressed = true;
      } else {
        const at = pending.indexOf(delimiter);
        if (at >= 0) {
          if (at > 0) yield pending.subarray(0, at);
          // The wanted part is complete; whatever follows is not read.
          return;
        }
        const keep = delimiter.length - 1;
        if (pending.length > keep) {
          yield pending.subarray(0, pending.length - keep);
          pending = Buffer.from(pending.subarray(pending.length - keep));
        }
      }
    }
    const next = await iterator.next();
    if (next.done) break;
    const chunk = Buffer.from(next.value.buffer, next.value.byteOffset, next.value.byteLength);
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
  }
  throw invalid(found ? 'cannot read multipart body: it ends inside the file part (truncated upload?)' : `cannot read multipart body: it has no field '${field}'`);
}
