import { z } from 'zod';
import { bool, duration, int, oneOf, secret, str } from '../fields.ts';

/**
 * [tiering]: hot -> cold moves by age. The cold backend takes the keys of [storage] under a `cold_`
 * prefix; its read cache lives in `<storage.cache_path>/cold` and shares `storage.cache_size`.
 */
export const tieringSection = z.object({
  enabled: bool(false, 'Move data files older than their policy\'s age from the hot storage to the cold backend'),
  default_hot_max_age_days: int(30, 'Age in days (of a file\'s UTC hour partition) after which a file without a policy moves to cold', 1, 1_000_000),
  schedule: str('0 2 * * *', 'When the scheduled migration runs (5-field cron, UTC)'),
  max_concurrent: int(4, 'Files moved at the same time by one migration', 1, 64),
  cold_backend: oneOf(['local', 's3', 'azure'] as const, 'local', 'Cold storage backend'),
  cold_local_path: str('./data/cold', 'Root folder of cold data files for the local cold backend'),
  cold_storage_class: str('', 'S3 storage class or Azure access tier set on each cold upload (empty: the bucket\'s or account\'s default)'),
  cold_cache_revalidate: duration(
    '1h',
    'How long a cached cold file is trusted before its ETag is checked again. Data files are never rewritten under the same key, so a cached copy stays right; 0s: a HEAD per file per query',
  ),
  cold_s3_bucket: str('', 'Cold S3 bucket'),
  cold_s3_region: str('us-east-1', 'Cold S3 region'),
  cold_s3_endpoint: str('', 'Cold S3 endpoint URL for S3-compatible stores'),
  cold_s3_path_style: bool(false, 'Use path-style S3 addressing for the cold bucket'),
  cold_s3_access_key: str('', 'Cold S3 access key (empty: the SDK default credential chain)'),
  cold_s3_secret_key: secret('', 'Cold S3 secret key'),
  cold_s3_prefix: str('', 'Key prefix inside the cold bucket'),
  cold_azure_container: str('', 'Cold Azure blob container'),
  cold_azure_connection_string: secret('', 'Cold Azure connection string'),
  cold_azure_account: str('', 'Cold Azure storage account name'),
  cold_azure_key: secret('', 'Cold Azure storage account key'),
  cold_azure_endpoint: str('', 'Cold Azure blob endpoint URL'),
  cold_azure_sas_token: secret('', 'Cold Azure SAS token'),
  cold_azure_prefix: str('', 'Blob name prefix inside the cold container'),
  test_crash_at: oneOf(
    ['', 'after_begin', 'after_copy', 'after_switch'],
    '',
    'Tests only: kill the process (SIGKILL) when a file move reaches this step, to prove crash safety. Release builds (dist/svc) do not contain the hook and ignore it',
  ),
});
