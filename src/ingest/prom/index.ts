/** Prometheus remote-write ingestion: a pure parser from the request body to columns. */
export { decodeRemoteWrite, parseRemoteWrite, uncompressSnappy, type RemoteWriteResult } from './remote-write-parser.ts';
export { decodeRemoteWriteV2, parseRemoteWriteV2, type RemoteWriteV2Result } from './remote-write-v2.ts';
