/**
 * The S3 side of RemoteObjectStore, through the official SDK. Large bodies go up as multipart uploads
 * (lib-storage's Upload: parts in parallel, aborted on failure so no partial object is ever visible);
 * throttling, 5xx and dropped connections are retried by the SDK's standard mode (exponential backoff
 * with jitter).
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type StorageClass,
  S3Client,
  type GetObjectCommandOutput,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { notFound } from '../../lib/errors.ts';
import { storageError, type PutCondition, type RemoteBackend, type RemoteObject } from '../cache/remote-backend.ts';
import { NativePut } from './native-put.ts';
import { isMissingObject, s3Error, s3Status } from './s3-errors.ts';

/** How to reach one bucket. Empty keys mean the SDK's default credential chain (env, profile, instance role). */
export interface S3Options {
  bucket: string;
  region: string;
  endpoint?: string;
  pathStyle?: boolean;
  accessKey?: string;
  secretKey?: string;
  /** Attempts per request including the first (SDK standard retry mode). */
  maxAttempts?: number;
  /** Multipart part size; bodies up to this size go in one PUT. S3 refuses parts under 5 MiB. */
  partSizeBytes?: number;
  /** Storage class set on every upload (`STANDARD_IA`, `GLACIER_IR`, ...); empty: the bucket's default. */
  storageClass?: string;
}

const MIN_PART = 5 * 1024 * 1024;
/** The most keys S3 takes in one DeleteObjects request. */
const DELETE_BATCH = 1000;

/** RemoteBackend over one S3 bucket. */
export class S3Backend implements RemoteBackend {
  readonly backend = 's3';
  readonly location: string;
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly partSize: number;
  private readonly storageClass: StorageClass | undefined;
  /** Bun's native client for one-request PUTs, with explicit keys (see native-put.ts for why). */
  private readonly native: NativePut | null;

  constructor(opts: S3Options) {
    this.bucket = opts.bucket;
    this.location = `s3://${opts.bucket}`;
    this.partSize = Math.max(MIN_PART, opts.partSizeBytes ?? 8 * 1024 * 1024);
    this.storageClass = (opts.storageClass || undefined) as StorageClass | undefined;
    this.client = new S3Client({
      region: opts.region || 'us-east-1',
      endpoint: opts.endpoint || undefined,
      forcePathStyle: opts.pathStyle ?? false,
      credentials: opts.accessKey ? { accessKeyId: opts.accessKey, secretAccessKey: opts.secretKey ?? '' } : undefined,
      maxAttempts: opts.maxAttempts ?? 5,
      retryMode: 'standard',
      // S3-compatible stores (MinIO, s3rver, ...) often lack the newer default CRC checksums.
      ...(opts.endpoint ? { requestChecksumCalculation: 'WHEN_REQUIRED' as const, responseChecksumValidation: 'WHEN_REQUIRED' as const } : {}),
      requestHandler: { connectionTimeout: 5_000, requestTimeout: 120_000 },
    });
    this.native = opts.accessKey
      ? new NativePut({ bucket: opts.bucket, region: opts.region, endpoint: opts.endpoint, pathStyle: opts.pathStyle ?? false, accessKey: opts.accessKey, secretKey: opts.secretKey ?? '', maxAttempts: opts.maxAttempts ?? 5, storageClass: this.storageClass })
      : null;
  }

  async upload(key: string, source: Uint8Array | { file: string }): Promise<RemoteObject> {
    // Bytes that fit one part go in one plain PUT: lib-storage's Upload machinery cost more CPU than
    // the request itself for the small objects put before a write is acknowledged (shared WAL segments).
    if (source instanceof Uint8Array && source.byteLength <= this.partSize) {
      if (this.native) {
        // Bun's client does not report the ETag; no caller of a bytes upload uses it (the read cache
        // only adopts uploaded files).
        await this.native.put(key, source);
        return { key, bytes: source.byteLength, modifiedMs: Date.now(), etag: '' };
      }
      try {
        const out = await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: source, StorageClass: this.storageClass }));
        return { key, bytes: source.byteLength, modifiedMs: Date.now(), etag: out.ETag ?? '' };
      } catch (err) {
        throw s3Error(`write ${key} to`, this.location, err);
      }
    }
    const bytes = source instanceof Uint8Array ? source.byteLength : (await stat(source.file)).size;
    const body = source instanceof Uint8Array ? source : createReadStream(source.file);
    try {
      const up = new Upload({ client: this.client, params: { Bucket: this.bucket, Key: key, Body: body, StorageClass: this.storageClass }, partSize: this.partSize, queueSize: 4, leavePartsOnError: false });
      const out = await up.done();
      return { key, bytes, modifiedMs: Date.now(), etag: out.ETag ?? '' };
    } catch (err) {
      throw s3Error(`write ${key} to`, this.location, err);
    } finally {
      if (!(body instanceof Uint8Array)) body.destroy();
    }
  }

  async download(key: string, file: string): Promise<RemoteObject> {
    const out = await this.getObject(key);
    try {
      await pipeline(out.Body as Readable, createWriteStream(file));
    } catch (err) {
      throw s3Error(`read ${key} from`, this.location, err);
    }
    return { key, bytes: out.ContentLength ?? 0, modifiedMs: out.LastModified?.getTime() ?? Date.now(), etag: out.ETag ?? '' };
  }

  async get(key: string): Promise<Uint8Array> {
    const out = await this.getObject(key);
    try {
      return await out.Body!.transformToByteArray();
    } catch (err) {
      throw s3Error(`read ${key} from`, this.location, err);
    }
  }

  async stream(key: string): Promise<ReadableStream<Uint8Array>> {
    return (await this.getObject(key)).Body!.transformToWebStream() as ReadableStream<Uint8Array>;
  }

  async head(key: string): Promise<RemoteObject | null> {
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { key, bytes: out.ContentLength ?? 0, modifiedMs: out.LastModified?.getTime() ?? 0, etag: out.ETag ?? '' };
    } catch (err) {
      if (isMissingObject(err)) return null;
      throw s3Error(`stat ${key} in`, this.location, err);
    }
  }

  async list(prefix: string): Promise<RemoteObject[]> {
    const out: RemoteObject[] = [];
    let token: string | undefined;
    try {
      do {
        const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix || undefined, ContinuationToken: token }));
        for (const o of page.Contents ?? [])
          if (o.Key) out.push({ key: o.Key, bytes: o.Size ?? 0, modifiedMs: o.LastModified?.getTime() ?? 0, etag: o.ETag ?? '' });
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    } catch (err) {
      throw s3Error(`list '${prefix}' in`, this.location, err);
    }
    return out;
  }

  async delete(key: string): Promise<boolean> {
    // S3 deletes are idempotent and do not say whether the object existed; the port does.
    if (!(await this.head(key))) return false;
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
      return true;
    } catch (err) {
      throw s3Error(`delete ${key} from`, this.location, err);
    }
  }

  async deleteMany(keys: readonly string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += DELETE_BATCH) {
      const batch = keys.slice(i, i + DELETE_BATCH);
      let errors: { Key?: string; Code?: string; Message?: string }[];
      try {
        // Quiet: the answer lists only the keys that were not deleted (a missing key counts as deleted).
        errors = (await this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Quiet: true, Objects: batch.map((Key) => ({ Key })) } }))).Errors ?? [];
      } catch (err) {
        throw s3Error(`delete ${batch.length} objects from`, this.location, err);
      }
      const first = errors[0];
      if (first) throw storageError(`delete ${first.Key} from`, this.location, { code: first.Code ?? 'Unknown', credentials: null, reachable: true }, new Error(`${errors.length} of ${batch.length} objects were not deleted: ${first.Message ?? first.Code}`));
    }
  }

  async probe(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
    } catch (err) {
      // HeadBucket has no body: a 404 is the bucket itself missing.
      if (s3Status(err) === 404) throw storageError('open bucket', this.location, { code: 'NoSuchBucket', credentials: null, reachable: true }, new Error('the bucket does not exist'));
      // A refused HEAD carries no reason; a one-key listing is refused the same way but says why (InvalidAccessKeyId, ...).
      if (s3Status(err) === 403) {
        try {
          await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, MaxKeys: 1 }));
        } catch (reason) {
          throw s3Error('open bucket', this.location, reason);
        }
      }
      throw s3Error('open bucket', this.location, err);
    }
  }

  async putIf(key: string, bytes: Uint8Array, condition: PutCondition): Promise<RemoteObject | null> {
    const cond = 'absent' in condition ? { IfNoneMatch: '*' } : { IfMatch: condition.etag };
    try {
      const out = await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: bytes, ...cond }));
      return { key, bytes: bytes.byteLength, modifiedMs: Date.now(), etag: out.ETag ?? '' };
    } catch (err) {
      // 412: the condition failed; 409: a concurrent conditional write won the race.
      const status = s3Status(err);
      if (status === 412 || status === 409) return null;
      throw s3Error(`write ${key} to`, this.location, err);
    }
  }

  private async getObject(key: string): Promise<GetObjectCommandOutput> {
    try {
      return await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch (err) {
      if (isMissingObject(err)) throw notFound(`cannot read object '${key}': it does not exist`);
      throw s3Error(`read ${key} from`, this.location, err);
    }
  }
}
