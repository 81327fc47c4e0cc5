import { z } from 'zod';
import { bool, duration, oneOf, secret, size, str } from '../fields.ts';

/** [storage]: where Parquet files live. */
export const storageSection = z.object({
  backend: oneOf(['local', 's3', 'azure'] as const, 'local', 'Storage backend for data files'),
  local_path: str('./data/svc', 'Root folder of data files for the local backend'),
  drop_page_cache: bool(
    true,
    'Local backend: drop each data file from the OS page cache once it is fsynced (files are written once and queries read them through DuckDB\'s own cache)',
  ),
  lock_expiry: duration(
    '30s',
    'One server per data folder or bucket prefix: the lock\'s heartbeat is renewed every third of this; a lock not renewed for this long is taken over by the next server that starts',
  ),
  cache_path: str('./data/cache', 'Local read-through cache of object-store files (s3, azure)'),
  cache_size: size('10GB', 'Upper bound of the local read cache'),
  cache_revalidate: duration('0s', 'How long a cached object is trusted before its ETag is checked again (0: a HEAD per use, never stale)'),
  s3_bucket: str('', 'S3 bucket'),
  s3_region: str('us-east-1', 'S3 region'),
  s3_endpoint: str('', 'S3 endpoint URL for S3-compatible stores'),
  s3_path_style: bool(false, 'Use path-style S3 addressing'),
  s3_access_key: str('', 'S3 access key (empty: the SDK default credential chain)'),
  s3_secret_key: secret('', 'S3 secret key'),
  s3_prefix: str('', 'Key prefix inside the bucket, so several servers can share one'),
  azure_container: str('', 'Azure blob container'),
  azure_connection_string: secret('', 'Azure connection string'),
  azure_account: str('', 'Azure storage account name'),
  azure_key: secret('', 'Azure storage account key'),
  azure_endpoint: str('', 'Azure blob endpoint URL'),
  azure_sas_token: secret('', 'Azure SAS token'),
  azure_prefix: str('', 'Blob name prefix inside the container, so several servers can share one'),
});
