/** Types for parse-prometheus-text-format, which ships none. */
declare module 'parse-prometheus-text-format' {
  /** One parsed metric family, in prom2json's shape. */
  export interface ParsedFamily {
    name: string;
    help: string;
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    metrics: { value?: string; labels?: Record<string, string>; buckets?: Record<string, string>; count?: string; sum?: string }[];
  }
  /** Parses exposition text; throws on an invalid line. */
  export default function parsePrometheusTextFormat(text: string): ParsedFamily[];
}
