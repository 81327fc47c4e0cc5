/** Counters of one subscription, kept for the life of the process across stop, start and reconnects. */

const MAX_TOPICS = 1000;

/** The statistics record of the spec plus write and connection counters. */
export interface SubscriptionStatsView {
  id: string;
  messages_received: number;
  bytes_received: number;
  decode_errors: number;
  points_written: number;
  write_errors: number;
  last_message_at: string | null;
  last_error: string | null;
  last_error_at: string | null;
  connects: number;
  /** Message count per topic; at most 1000 topics are tracked, the rest are summed under `_other`. */
  topics: Record<string, number>;
}

/** Mutable counters updated by the runtime. */
export class SubscriptionStats {
  messagesReceived = 0;
  bytesReceived = 0;
  decodeErrors = 0;
  pointsWritten = 0;
  writeErrors = 0;
  connects = 0;
  lastMessageAt: number | null = null;
  lastError: string | null = null;
  lastErrorAt: number | null = null;
  private readonly topics = new Map<string, number>();

  constructor(readonly id: string) {}

  /** Counts one received message. */
  received(topic: string, bytes: number): void {
    this.messagesReceived++;
    this.bytesReceived += bytes;
    this.lastMessageAt = Date.now();
    // A topic per device can mean millions of topics: bound the map so stats cannot eat the heap.
    const key = this.topics.has(topic) || this.topics.size < MAX_TOPICS ? topic : '_other';
    this.topics.set(key, (this.topics.get(key) ?? 0) + 1);
  }

  /** Records the latest problem (decode, write or connection). */
  error(message: string): void {
    this.lastError = message;
    this.lastErrorAt = Date.now();
  }

  /** The JSON view. */
  view(): SubscriptionStatsView {
    return {
      id: this.id,
      messages_received: this.messagesReceived,
      bytes_received: this.bytesReceived,
      decode_errors: this.decodeErrors,
      points_written: this.pointsWritten,
      write_errors: this.writeErrors,
      last_message_at: iso(this.lastMessageAt),
      last_error: this.lastError,
      last_error_at: iso(this.lastErrorAt),
      connects: this.connects,
      topics: Object.fromEntries(this.topics),
    };
  }
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
