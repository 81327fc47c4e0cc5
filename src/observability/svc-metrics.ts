import { MetricsRegistry } from './metrics.ts';
import { readMemory } from './runtime-memory.ts';

/**
 * Every metric the spec names, registered once under its exact name. Modules receive this object and
 * move the series they own; names the spec says stay 0 are registered and never moved.
 */
export function createSvcMetrics(registry = new MetricsRegistry()) {
  const c = (name: string, help: string) => registry.counter(name, help);
  const g = (name: string, help: string, collect?: () => number) => registry.gauge(name, help, collect);
  return {
    registry,
    ingestRecords: c('svc_ingest_records_total', 'Records accepted by any write path'),
    ingestBytes: c('svc_ingest_bytes_total', 'Request body bytes accepted by write paths'),
    ingestBatches: c('svc_ingest_batches_total', 'Write requests accepted'),
    ingestErrors: c('svc_ingest_errors_total', 'Write requests refused or failed'),
    msgpackRecords: c('svc_msgpack_records_total', 'Records accepted over MessagePack'),
    msgpackRequests: c('svc_msgpack_requests_total', 'MessagePack write requests'),
    msgpackErrors: c('svc_msgpack_errors_total', 'MessagePack write requests refused'),
    lineprotocolRecords: c('svc_lineprotocol_records_total', 'Lines accepted over line protocol'),
    lineprotocolRequests: c('svc_lineprotocol_requests_total', 'Line-protocol write requests'),
    lineprotocolErrors: c('svc_lineprotocol_errors_total', 'Line-protocol lines refused'),
    promSamples: c('svc_prom_remote_write_samples_total', 'Samples accepted over Prometheus remote write'),
    httpRequests: c('svc_http_requests_total', 'HTTP requests served'),
    httpErrors: c('svc_http_requests_error_total', 'HTTP requests answered with status >= 400'),
    httpLatency: registry.histogram('svc_http_latency_seconds', 'HTTP request latency by route group'),
    queryRequests: c('svc_query_requests_total', 'SQL queries received'),
    queryErrors: c('svc_query_errors_total', 'SQL queries that failed'),
    queryTimeouts: c('svc_query_timeouts_total', 'SQL queries cancelled by query.timeout'),
    slowQueries: c('svc_slow_queries_total', 'Queries slower than query.slow_query_threshold_ms'),
    storageWrites: c('svc_storage_writes_total', 'Objects written to storage'),
    storageWriteBytes: c('svc_storage_write_bytes_total', 'Bytes written to storage'),
    storageReads: c('svc_storage_reads_total', 'Objects read from storage'),
    storageReadBytes: c('svc_storage_read_bytes_total', 'Bytes read from storage'),
    storageErrors: c('svc_storage_errors_total', 'Storage operations that failed'),
    bufferRecords: g('svc_buffer_records_buffered', 'Records waiting in write buffers (sampled each second)'),
    bufferQueueDepth: g('svc_buffer_queue_depth', 'Flush jobs waiting for a worker'),
    bufferFlushes: c('svc_buffer_flushes_total', 'Buffer flushes completed'),
    bufferRecordsWritten: c('svc_buffer_records_written_total', 'Records written to Parquet by flushes'),
    bufferFlushFailures: c('svc_buffer_flush_failures_total', 'Buffer flushes that failed (rows kept and retried)'),
    bufferBytes: g('svc_buffer_bytes', 'Estimated column memory of the rows in write buffers and flushes in flight (sampled each second)'),
    bufferBytesLimit: g('svc_buffer_bytes_limit', 'ingest.max_buffered_size in bytes: at svc_buffer_bytes, writes get 503 (0: no bound)'),
    bufferBatchesSetAside: c('svc_buffer_batches_set_aside_total', 'Flushes whose rows were set aside in ingest.set_aside_path after failing ingest.flush_max_attempts times'),
    bufferRecordsSetAside: c('svc_buffer_records_set_aside_total', 'Rows set aside in ingest.set_aside_path (no longer queryable until sent again)'),
    walRecordsPreserved: c('svc_wal_records_preserved_total', 'Records appended to the WAL'),
    walDroppedEntries: c('svc_wal_dropped_entries_total', 'Corrupt or torn WAL entries skipped at replay'),
    walFailedWrites: c('svc_wal_failed_writes_total', 'WAL appends that failed'),
    walOversized: c('svc_wal_oversized_payloads_total', 'Writes larger than a WAL segment'),
    walRecovery: c('svc_wal_recovery_total', 'WAL files replayed at start'),
    walRecoveryRecords: c('svc_wal_recovery_records_total', 'Records replayed from the WAL at start'),
    walSharedCommits: c('svc_wal_shared_commits_total', 'Shared WAL groups committed (one segment object and one etcd registration each)'),
    walSharedEntries: c('svc_wal_shared_entries_total', 'Writes committed to the shared WAL (divided by the commits: writes per group)'),
    walSharedBytes: c('svc_wal_shared_bytes_total', 'Bytes of the shared WAL segment objects put'),
    walSharedPutSeconds: c('svc_wal_shared_put_seconds_total', 'Time spent putting shared WAL segments into the bucket'),
    walSharedCommitSeconds: c('svc_wal_shared_commit_seconds_total', 'Time from the start of each shared WAL commit to its registration in etcd'),
    walSharedSegmentsPending: g('svc_wal_shared_segments_pending', 'Shared WAL segments registered in etcd whose entries are not all in registered files (gauge, on the primary writer)'),
    walSharedSegmentsUnreadable: c('svc_wal_shared_segments_unreadable_total', 'Shared WAL segments a take-over could not replay (object missing or not a segment): their unflushed entries are lost; the key and object stay for an operator'),
    walSharedWithdrawn: c('svc_wal_shared_withdrawn_total', 'Shared WAL registrations withdrawn because etcd did not answer them (their writes were answered 503, not stored)'),
    clusterFailovers: c('svc_cluster_failovers_total', 'Times this node took over as primary writer from another one'),
    clusterIsPrimary: g('svc_cluster_is_primary', '1 while this node is the primary writer, else 0 (gauge)'),
    compactionJobs: c('svc_compaction_jobs_total', 'Compaction jobs started'),
    compactionJobsSuccess: c('svc_compaction_jobs_success_total', 'Compaction jobs completed'),
    compactionJobsFailed: c('svc_compaction_jobs_failed_total', 'Compaction jobs failed'),
    compactionManifestsRecovered: c('svc_compaction_manifests_recovered_total', 'Interrupted compactions completed or rolled back at start'),
    tieringFilesMoved: c('svc_tiering_files_moved_total', 'Data files moved from the hot to the cold tier'),
    tieringBytesMoved: c('svc_tiering_bytes_moved_total', 'Bytes of data files moved from the hot to the cold tier'),
    tieringFailures: c('svc_tiering_failures_total', 'File moves to the cold tier that failed (the file stays hot)'),
    memoryAlloc: g('svc_memory_alloc_bytes', 'Bytes of live JavaScript heap objects', () => readMemory().alloc),
    memoryHeapAlloc: g('svc_memory_heap_alloc_bytes', 'Bytes the JavaScript heap has reserved for objects', () => readMemory().heapAlloc),
    memorySys: g('svc_memory_sys_bytes', 'Resident set size of the process', () => readMemory().sys),
    // Set by main.ts with `collectFrom`: in-flight HTTP requests and WebSockets on every listener.
    goroutines: g('svc_goroutines', 'In-flight requests on every listener (the nearest equivalent of goroutines)'),
    gcCycles: c('svc_gc_cycles_total', 'Garbage collections noticed (a lower bound; see gc-counter.ts)'),
    auditEvents: c('svc_audit_events_total', 'Audit events recorded'),
    auditWriteErrors: c('svc_audit_write_errors_total', 'Audit batches that failed to write'),
    auditDropped: c('svc_audit_events_dropped_total', 'Audit events dropped on a full queue'),
    pgwireConnections: g('svc_pgwire_connections', 'Open Postgres wire connections that count toward pgwire.max_connections (gauge)'),
    pgwireRefused: c('svc_pgwire_connections_refused_total', 'Postgres wire connections refused at pgwire.max_connections (SQLSTATE 53300)'),
    pgwireLoginTimeouts: c('svc_pgwire_login_timeouts_total', 'Postgres wire connections closed for not logging in within pgwire.login_timeout'),
    // Exported and always 0, as the spec says.
    dbConnectionsOpen: g('svc_db_connections_open', 'Always 0'),
    dbConnectionsInUse: g('svc_db_connections_in_use', 'Always 0'),
    dbQueries: c('svc_db_queries_total', 'Always 0'),
    replicationSequenceGaps: c('svc_replication_sequence_gaps_total', 'Always 0'),
    decompBufferDiscards: c('svc_decomp_buffer_discards_total', 'Always 0'),
  };
}

/** The metrics object handed to every module. */
export type SvcMetrics = ReturnType<typeof createSvcMetrics>;
