/**
 * An Azurite blob service (Microsoft's emulator, npm package) run as a child process on a random
 * loopback port, in memory, with the well-known development account.
 */
import { join } from 'node:path';
import { AccountSASPermissions, AccountSASResourceTypes, AccountSASServices, BlobServiceClient, StorageSharedKeyCredential, generateAccountSASQueryParameters } from '@azure/storage-blob';
import { spawnUntil } from './spawn.ts';

const ROOT = join(import.meta.dir, '..', '..');

/** Azurite's built-in development account. */
export const AZURITE_ACCOUNT = 'devstoreaccount1';
export const AZURITE_KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

export interface TestAzurite {
  /** Blob endpoint including the account: http://127.0.0.1:<port>/devstoreaccount1 */
  endpoint: string;
  connectionString: string;
  /** An account SAS token (read, write, list, delete; one hour). */
  accountSas(): Promise<string>;
  /** Creates a container (idempotent). */
  createContainer(name: string): Promise<void>;
  close(): Promise<void>;
  /** Environment for a server that uses this Azurite (`SVC_STORAGE_*`). */
  env(container: string, prefix?: string): Record<string, string>;
}

/** Starts Azurite's blob service and waits until it listens. */
export async function startAzurite(): Promise<TestAzurite> {
  const bin = join(ROOT, 'node_modules', 'azurite', 'dist', 'src', 'blob', 'main.js');
  const args = ['--blobHost', '127.0.0.1', '--blobPort', '0', '--inMemoryPersistence', '--skipApiVersionCheck', '--loose', '--disableTelemetry'];
  const { proc, match: m } = await spawnUntil(['node', bin, ...args], /listens on (http:\/\/[^\s]+)/, 'azurite', { cwd: ROOT });
  const endpoint = `${m[1]!.replace(/\/$/, '')}/${AZURITE_ACCOUNT}`;
  const connectionString = `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_KEY};BlobEndpoint=${endpoint};`;
  const service = BlobServiceClient.fromConnectionString(connectionString);
  return {
    endpoint,
    connectionString,
    async accountSas() {
      const sas = generateAccountSASQueryParameters(
        {
          expiresOn: new Date(Date.now() + 3_600_000),
          permissions: AccountSASPermissions.parse('rwdlc'),
          resourceTypes: AccountSASResourceTypes.parse('sco').toString(),
          services: AccountSASServices.parse('b').toString(),
        },
        new StorageSharedKeyCredential(AZURITE_ACCOUNT, AZURITE_KEY),
      );
      return sas.toString();
    },
    async createContainer(name) {
      await service.getContainerClient(name).createIfNotExists();
    },
    async close() {
      proc.kill();
      await proc.exited;
    },
    env: (container, prefix = '') => ({
      SVC_STORAGE_BACKEND: 'azure',
      SVC_STORAGE_AZURE_CONTAINER: container,
      SVC_STORAGE_AZURE_CONNECTION_STRING: connectionString,
      SVC_STORAGE_AZURE_PREFIX: prefix,
    }),
  };
}
