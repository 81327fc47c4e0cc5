/** The JSON description of the MessagePack write format served at GET /api/v1/write/msgpack/spec. */
export const MSGPACK_SPEC = {
  endpoint: 'POST /api/v1/write/msgpack',
  content_type: 'application/msgpack',
  compression: 'optional gzip or zstd, detected by magic bytes (Content-Encoding is not required)',
  database: 'header x-svc-database (default: default)',
  success_status: 204,
  formats: {
    columnar: {
      description: 'preferred: one measurement, equal-length column arrays',
      shape: { m: 'string (measurement)', columns: { time: '[int, ...]', '<tag or field>': '[value, ...]' } },
      example: { m: 'cpu', columns: { time: [1700000000000, 1700000001000], host: ['a', 'b'], usage: [0.5, 0.7] } },
    },
    row: {
      description: 'one point per map',
      shape: { m: 'string', t: 'int (optional)', tags: { '<name>': 'string' }, fields: { '<name>': 'number | string | bool' } },
      example: { m: 'cpu', t: 1700000000000, tags: { host: 'a' }, fields: { usage: 0.5 } },
    },
    array: 'a top-level array of columnar or row maps',
    batch: '{batch: [...]} wrapping such an array',
  },
  time: {
    column: 'time',
    unit: 'integer epoch; unit detected per column from magnitude: s < 1e10 <= ms < 1e13 <= us < 1e16 <= ns',
    missing: 'the server time of the request',
    storage: 'UTC timestamp, microseconds',
  },
  types: { integer: 'INT64 (BIGINT)', float: 'DOUBLE', string: 'VARCHAR', boolean: 'BOOLEAN', null: 'NULL' },
  tags: 'string columns (columnar form) or the tags map (row form); recorded in the Parquet key/value metadata',
  errors: { 400: 'malformed payload, unequal column lengths, invalid names', 413: 'body larger than server.max_payload_size', 503: 'flush queue full; retry after Retry-After seconds' },
} as const;
