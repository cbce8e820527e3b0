// Server-sent events on the raw Node response, with backpressure: `send` resolves only once the socket has
// taken the bytes (`write` returned true, or 'drain' fired), so the caller reads the next engine output
// only as fast as the HTTP client reads. Until then the engine's outputs wait in the client's output
// stream, which merges unread token deltas: memory grows with unread tokens, never with engine steps,
// and other streams are not slowed (each awaits only its own socket).
//
// Each event is one write to the socket: the chunked-encoding frame (`<hex length>\r\n<event>\r\n`, the
// bytes `ServerResponse.write` sends) is built here and handed to the socket in one string. Going through
// `ServerResponse.write` costs a cork, a nextTick uncork and a 3-buffer writev per event, which at hundreds
// of streams was most of the server's own CPU per token. Where the response does not own its socket yet
// (a pipelined request waiting its turn), or does not use chunked encoding (HTTP/1.0), the response's own
// `write` is used.

import type { ServerResponse } from "node:http";
import type { Socket } from "node:net";

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

  /**
   * `data: <json>\n\n`; false when the connection is gone. A plain boolean when that is known at once (the
   * socket took the bytes, or is gone), so that a caller can skip an await per event; else a promise that
   * settles once the socket drained (true) or closed (false).
   */
  send(payload: unknown): boolean | Promise<boolean> {
    return this.#write(`data: ${JSON.stringify(payload)}\n\n`);
  }

  /** `data: <json>\n\n` for an already serialized payload. */
  sendJson(json: string): boolean | Promise<boolean> {
    return this.#write(`data: ${json}\n\n`);
  }

  /** `data: [DONE]\n\n` and the end of the response. */
  async done(): Promise<void> {
    if (await this.#write("data: [DONE]\n\n")) this.#raw.end();
  }

  end(): void {
    if (!this.closed) this.#raw.end();
  }

  /** The socket to frame chunks on directly, or null when the response's own `write` must be used. */
  #directSocket(): Socket | null {
    const raw = this.#raw as ServerResponse & { _httpMessage?: unknown; chunkedEncoding?: boolean };
    const socket = raw.socket as (Socket & { _httpMessage?: unknown }) | null;
    if (socket === null || raw.chunkedEncoding !== true || !raw.headersSent) return null;
    return socket._httpMessage === raw ? socket : null;
  }

  #write(chunk: string): boolean | Promise<boolean> {
    if (this.closed) return false;
    const socket = this.#directSocket();
    let ok: boolean;
    if (socket !== null) {
      ok = socket.write(`${Buffer.byteLength(chunk).toString(16)}\r\n${chunk}\r\n`);
    } else {
      ok = this.#raw.write(chunk);
    }
    const stats = this.#stats;
    if (stats) {
      stats.events++;
      stats.maxBufferedBytes = Math.max(stats.maxBufferedBytes, this.#raw.writableLength);
      if (!ok) stats.drainWaits++;
    }
    if (ok) return true;
    // The socket's 'drain' when writing to it directly (the response emits 'drain' only after its own
    // writes filled the socket).
    const drains: NodeJS.EventEmitter = socket ?? this.#raw;
    return new Promise((resolve) => {
      const onDrain = () => {
        this.#raw.off("close", onClose);
        resolve(true);
      };
      const onClose = () => {
        drains.off("drain", onDrain);
        resolve(false);
      };
      drains.once("drain", onDrain);
      this.#raw.once("close", onClose);
    });
  }
}
