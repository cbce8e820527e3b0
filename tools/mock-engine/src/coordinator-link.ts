// An engine's side of vLLM's DP coordinator (vllm/v1/engine/core.py): with INIT's coordinator_input /
// coordinator_output set, EngineCoreProc
//  - connects an XSUB (identity = the engine's) to coordinator_input, sends the subscription 0x01 and, after
//    the input-socket registrations, blocks until the coordinator's READY (process_input_sockets; the
//    handshake's READY waits for it: "Don't complete handshake until DP coordinator ready message");
//  - connects a PUSH (linger 4000) to coordinator_output (process_output_sockets), on which it sends its
//    request counts as EngineCoreOutputs(scheduler_stats=SchedulerStats(num_running, num_waiting,
//    kv_cache_usage)) whenever they changed, before and after each busy-loop step
//    (EngineCoreProc._maybe_publish_request_counts; publish_dp_lb_stats: a coordinator and no external LB);
//  - ignores later READYs (sent to late subscribers). Dense engines get no START_DP_WAVE; the mock logs one
//    and otherwise ignores it (it has no waves: DPEngineCoreProc is not modelled).
import { Push, XSubscriber } from "zeromq";
import { logEvent } from "./events.js";
import { makeSchedulerStats } from "./stats.js";
import type { MockVllmVersion } from "./versions.js";
import { encodeOutputs, type OutputEncoding } from "./wire.js";

const READY = "READY";
const OUTPUT_LINGER_MS = 4_000;

export interface RequestCounts {
  numRunning: number;
  numWaiting: number;
  kvCacheUsage: number;
}

export class CoordinatorLink {
  readonly #engineIndex: number;
  readonly #subscriber: XSubscriber;
  readonly #push: Push;
  readonly #encoding: OutputEncoding;
  /** self.last_counts = (0, 0): an idle engine publishes nothing until its counts change. */
  #last: [number, number] = [0, 0];
  #sending: Promise<void> = Promise.resolve();

  private constructor(engineIndex: number, subscriber: XSubscriber, push: Push, encoding: OutputEncoding) {
    this.#engineIndex = engineIndex;
    this.#subscriber = subscriber;
    this.#push = push;
    this.#encoding = encoding;
  }

  /** Connects both sockets and subscribes; `ready()` then waits for the coordinator's READY. */
  static connect(
    engineIndex: number,
    identity: Buffer,
    addresses: { input: string; output: string },
    encoding: OutputEncoding,
  ): CoordinatorLink {
    const subscriber = new XSubscriber({ linger: 0 });
    // zeromq.js defines no routingId on an XSUB; ZMQ_ROUTING_ID (5) is still a socket option there (vLLM sets it).
    (subscriber as unknown as { setStringOption(option: number, value: Buffer): void }).setStringOption(
      5,
      identity,
    );
    subscriber.connect(addresses.input);
    const push = new Push({ linger: OUTPUT_LINGER_MS, sendHighWaterMark: 0 });
    push.connect(addresses.output);
    const link = new CoordinatorLink(engineIndex, subscriber, push, encoding);
    link.#sending = subscriber.send(Uint8Array.of(0x01));
    return link;
  }

  /** `assert coord_socket.recv() == b"READY"`, then reads (and ignores) what the coordinator sends later. */
  async ready(): Promise<void> {
    await this.#sending;
    const [first] = await this.#subscriber.receive();
    if (first?.toString() !== READY) {
      throw new Error(`expected READY from the DP coordinator, got ${first?.subarray(0, 8).toString("hex")}`);
    }
    logEvent({ event: "coordinator-ready", engineIndex: this.#engineIndex });
    void this.#readLater();
  }

  async #readLater(): Promise<void> {
    try {
      for await (const frames of this.#subscriber) {
        if (frames[0]?.toString() === READY) continue;
        logEvent({
          event: "coordinator-message",
          engineIndex: this.#engineIndex,
          typeByte: frames[0]?.[0] ?? -1,
        });
      }
    } catch {
      // closed
    }
  }

  /** _maybe_publish_request_counts: only when (running, waiting) changed. */
  publishCounts(counts: RequestCounts, version: MockVllmVersion): void {
    if (this.#push.closed) return;
    if (counts.numRunning === this.#last[0] && counts.numWaiting === this.#last[1]) return;
    this.#last = [counts.numRunning, counts.numWaiting];
    logEvent({
      event: "coordinator-counts",
      engineIndex: this.#engineIndex,
      running: counts.numRunning,
      waiting: counts.numWaiting,
    });
    const stats = makeSchedulerStats({ ...counts, newRequests: 0, newRequestTokens: 0 }, version);
    const frames = encodeOutputs(
      { engineIndex: this.#engineIndex, timestamp: performance.now() / 1000, schedulerStats: stats },
      this.#encoding,
    );
    this.#sending = this.#sending.then(() => this.#push.send(frames)).catch(() => {});
  }

  close(linger: number): void {
    this.#subscriber.close();
    if (!this.#push.closed) {
      this.#push.linger = linger;
      this.#push.close();
    }
  }
}
