/**
 * The Azure blob side of RemoteObjectStore, through the official SDK. Large bodies go up as staged
 * blocks committed in one call (a blob appears whole or not at all); throttling, 5xx and dropped
 * connections are retried by the SDK's exponential retry policy.
 */
import { Readable } from 'node:stream';
import { BlobServiceClient, StorageSharedKeyCredential, type BlockBlobTier, type ContainerClient, type StoragePipelineOptions } from '@azure/storage-blob';
import { invalid, notFound } from '../../lib/errors.ts';
import type { PutCondition, RemoteBackend, RemoteObject } from '../cache/remote-backend.ts';
import { azureError, isMissingBlob } from './azure-errors.ts';

/** How to reach one container: a connection string, or account + key, or a SAS token (with account or endpoint). */
export interface AzureOptions {
  container: string;
  connectionString?: string;
  account?: string;
  key?: string;
  /** Blob endpoint URL; default `https://<account>.blob.core.windows.net`. */
  endpoint?: string;
  sasToken?: string;
  /** Tries per request including the first. */
  maxTries?: number;
  /** Block size of large uploads; bodies up to this size go in one request. */
  blockSizeBytes?: number;
  /** Access tier set on every upload (`Hot`, `Cool`, `Cold`, `Archive`); empty: the account's default. */
  accessTier?: string;
}

/** RemoteBackend over one Azure blob container. */
export class AzureBackend implements RemoteBackend {
  readonly backend = 'azure';
  readonly location: string;
  private readonly container: ContainerClient;
  private readonly anonymous: boolean;
  private readonly blockSize: number;
  private readonly tier: BlockBlobTier | undefined;

  constructor(opts: AzureOptions) {
    const pipeline: StoragePipelineOptions = {
      retryOptions: { maxTries: opts.maxTries ?? 5, retryDelayInMs: 200, maxRetryDelayInMs: 10_000, tryTimeoutInMs: 120_000 },
    };
    const service = serviceClient(opts, pipeline);
    this.anonymous = !opts.connectionString && !opts.key && !opts.sasToken;
    this.container = service.getContainerClient(opts.container);
    this.location = `azure://${service.accountName || new URL(service.url).host}/${opts.container}`;
    this.blockSize = opts.blockSizeBytes ?? 8 * 1024 * 1024;
    this.tier = (opts.accessTier || undefined) as BlockBlobTier | undefined;
  }

  async upload(key: string, source: Uint8Array | { file: string }): Promise<RemoteObject> {
    const blob = this.container.getBlockBlobClient(key);
    const opts = { blockSize: this.blockSize, maxSingleShotSize: this.blockSize, concurrency: 4, tier: this.tier };
    try {
      const out = source instanceof Uint8Array ? await blob.uploadData(source, opts) : await blob.uploadFile(source.file, opts);
      const bytes = source instanceof Uint8Array ? source.byteLength : Bun.file(source.file).size;
      return { key, bytes, modifiedMs: out.lastModified?.getTime() ?? Date.now(), etag: out.etag ?? '' };
    } catch (err) {
      throw azureError(`write ${key} to`, this.location, err, this.anonymous);
    }
  }

  async download(key: string, file: string): Promise<RemoteObject> {
    try {
      const out = await this.container.getBlobClient(key).downloadToFile(file);
      return { key, bytes: out.contentLength ?? 0, modifiedMs: out.lastModified?.getTime() ?? Date.now(), etag: out.etag ?? '' };
    } catch (err) {
      throw this.readError(key, err);
    }
  }

  async get(key: string): Promise<Uint8Array> {
    const body = await this.stream(key);
    try {
      return new Uint8Array(await new Response(body).arrayBuffer());
    } catch (err) {
      throw this.readError(key, err);
    }
  }

  async stream(key: string): Promise<ReadableStream<Uint8Array>> {
    try {
      const out = await this.container.getBlobClient(key).download();
      return Readable.toWeb(out.readableStreamBody as Readable) as ReadableStream<Uint8Array>;
    } catch (err) {
      throw this.readError(key, err);
    }
  }

  async head(key: string): Promise<RemoteObject | null> {
    try {
      const p = await this.container.getBlobClient(key).getProperties();
      return { key, bytes: p.contentLength ?? 0, modifiedMs: p.lastModified?.getTime() ?? 0, etag: p.etag ?? '' };
    } catch (err) {
      if (isMissingBlob(err)) return null;
      throw azureError(`stat ${key} in`, this.location, err, this.anonymous);
    }
  }

  async list(prefix: string): Promise<RemoteObject[]> {
    const out: RemoteObject[] = [];
    try {
      for await (const b of this.container.listBlobsFlat({ prefix: prefix || undefined }))
        out.push({ key: b.name, bytes: b.properties.contentLength ?? 0, modifiedMs: b.properties.lastModified?.getTime() ?? 0, etag: b.properties.etag ?? '' });
    } catch (err) {
      throw azureError(`list '${prefix}' in`, this.location, err, this.anonymous);
    }
    return out;
  }

  async delete(key: string): Promise<boolean> {
    try {
      return (await this.container.getBlobClient(key).deleteIfExists()).succeeded;
    } catch (err) {
      throw azureError(`delete ${key} from`, this.location, err, this.anonymous);
    }
  }

  async deleteMany(keys: readonly string[]): Promise<void> {
    // deleteIfExists is already one request per blob and asks nothing first.
    for (const key of keys) await this.delete(key);
  }

  async probe(): Promise<void> {
    try {
      await this.container.getProperties();
    } catch (err) {
      throw azureError('open container', this.location, err, this.anonymous);
    }
  }

  async putIf(key: string, bytes: Uint8Array, condition: PutCondition): Promise<RemoteObject | null> {
    const conditions = 'absent' in condition ? { ifNoneMatch: '*' } : { ifMatch: condition.etag };
    try {
      const out = await this.container.getBlockBlobClient(key).upload(bytes, bytes.byteLength, { conditions });
      return { key, bytes: bytes.byteLength, modifiedMs: out.lastModified?.getTime() ?? Date.now(), etag: out.etag ?? '' };
    } catch (err) {
      // 409 BlobAlreadyExists (If-None-Match), 412 ConditionNotMet (If-Match).
      const status = (err as { statusCode?: number }).statusCode;
      if (status === 412 || status === 409) return null;
      throw azureError(`write ${key} to`, this.location, err, this.anonymous);
    }
  }

  private readError(key: string, err: unknown): Error {
    if (isMissingBlob(err)) return notFound(`cannot read object '${key}': it does not exist`);
    return azureError(`read ${key} from`, this.location, err, this.anonymous);
  }
}

/** The service client for whichever credentials are configured (see AzureOptions). */
function serviceClient(opts: AzureOptions, pipeline: StoragePipelineOptions): BlobServiceClient {
  if (!opts.container) throw invalid('cannot open azure storage: storage.azure_container is empty');
  if (opts.connectionString) return BlobServiceClient.fromConnectionString(opts.connectionString, pipeline);
  if (!opts.account && !opts.endpoint) throw invalid('cannot open azure storage: set storage.azure_connection_string, or storage.azure_account (or azure_endpoint) with azure_key or azure_sas_token');
  const endpoint = (opts.endpoint || `https://${opts.account}.blob.core.windows.net`).replace(/\/+$/, '');
  if (opts.key) {
    if (!opts.account) throw invalid('cannot open azure storage: storage.azure_key needs storage.azure_account');
    return new BlobServiceClient(endpoint, new StorageSharedKeyCredential(opts.account, opts.key), pipeline);
  }
  const sas = (opts.sasToken ?? '').replace(/^\?/, '');
  return new BlobServiceClient(sas ? `${endpoint}?${sas}` : endpoint, undefined, pipeline);
}
