// Server-sent events on the raw Node response, with backpressure: `send` resolves only once the socket has
// taken the bytes (`write` returned true, or 'drain' fired), so the caller reads the next engine output
// only as fast as the HTTP client reads. Until then the engine's outputs wait in the client's output
// stream, which merges unread token deltas: memory grows with unread tokens, never with engine steps,
// and other streams are not slowed (each awaits only its own socket).
import type { ServerResponse } from "node:http";

/** Counters a test or an operator can read (`app.sseStats`). */
export interface SseStats {
  /** Events written. */
  events: number;
  /** Writes that found the socket full and waited for 'drain' before the next engine output was read. */
  drainWaits: number;
  /** Most bytes ever queued in one response's user-space buffer (bounded: about one event over 16 KiB). */
  maxBufferedBytes: number;
}

export class SseWriter {
  readonly #raw: ServerResponse;
  readonly #stats: SseStats | undefined;
  #closed = false;

  constructor(raw: ServerResponse, stats?: SseStats) {
    this.#raw = raw;
    this.#stats = stats;
    raw.once("close", () => {
      this.#closed = true;
    });
  }

  /** The connection is gone (client disconnected or the response ended). */
  get closed(): boolean {
    return this.#closed || this.#raw.destroyed;
  }

  /** Writes the status line and the SSE headers (vLLM answers `text/event-stream`). */
  open(): void {
    this.#raw.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
    // Headers go out at once, before the first token, so clients see the stream start.
    this.#raw.flushHeaders();
  }

  /** `data: <json>\n\n`; false when the connection is gone. */
  send(payload: unknown): Promise<boolean> {
    return this.#write(`data: ${JSON.stringify(payload)}\n\n`);
  }

  /** `data: <json>\n\n` for an already serialized payload. */
  sendJson(json: string): Promise<boolean> {
    return this.#write(`data: ${json}\n\n`);
  }

  /** `data: [DONE]\n\n` and the end of the response. */
  async done(): Promise<void> {
    if (await this.#write("data: [DONE]\n\n")) this.#raw.end();
  }

  end(): void {
    if (!this.closed) this.#raw.end();
  }

  #write(chunk: string): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    const ok = this.#raw.write(chunk);
    const stats = this.#stats;
    if (stats) {
      stats.events++;
      stats.maxBufferedBytes = Math.max(stats.maxBufferedBytes, this.#raw.writableLength);
      if (!ok) stats.drainWaits++;
    }
    if (ok) return Promise.resolve(true);
    return new Promise((resolve) => {
      const onDrain = () => {
        this.#raw.off("close", onClose);
        resolve(true);
      };
      const onClose = () => {
        this.#raw.off("drain", onDrain);
        resolve(false);
      };
      this.#raw.once("drain", onDrain);
      this.#raw.once("close", onClose);
    });
  }
}
