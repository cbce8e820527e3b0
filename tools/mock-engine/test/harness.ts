// A minimal raw-socket frontend for the mock engine's tests, written directly on zeromq (NOT the
// product transport): handshake ROUTER, input ROUTER(s) and output PULL(s), all bound by the test.
import { randomUUID } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  decodeHandshakeStatus,
  decodeOutputMessage,
  decodeReadyResponse,
  type EngineCoreOutputs,
  type EngineCoreReadyResponse,
  type EngineCoreRequest,
  encodeAbortRequest,
  encodeAddRequest,
  encodeHandshakeInit,
  encodeUtilityCall,
  engineIdentity,
  engineIndexFromIdentity,
  type HandshakeStatus,
  type UtilityOutput,
} from "@vllm-engine-core/protocol";
import { Pull, Router } from "zeromq";
import { ipcSocketPath } from "../src/index.js";

export function ipcAddress(tag: string): string {
  return `ipc://${join(tmpdir(), `mock-engine-${tag}-${randomUUID().slice(0, 8)}.sock`)}`;
}

/** A message received on an output PULL: decoded, or the raw frames when it did not decode. */
export type Received =
  | { kind: "dead"; frontend: number; frames: Buffer[]; at: number }
  | { kind: "outputs"; frontend: number; outputs: EngineCoreOutputs; frames: Buffer[]; at: number }
  | { kind: "bad"; frontend: number; error: Error; frames: Buffer[]; at: number };

class Waitable<T> {
  readonly items: T[] = [];
  #waiters = new Set<{ predicate: (item: T) => boolean; resolve: (item: T) => void }>();
  push(item: T): void {
    this.items.push(item);
    for (const w of [...this.#waiters]) {
      if (w.predicate(item)) {
        this.#waiters.delete(w);
        w.resolve(item);
      }
    }
  }
  /** First item (already received or future) after index `from` that matches. */
  wait(predicate: (item: T) => boolean, timeoutMs: number, what: string, from = 0): Promise<T> {
    const found = this.items.slice(from).find(predicate);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise<T>((resolve, reject) => {
      const waiter = {
        predicate,
        resolve: (item: T) => {
          clearTimeout(timer);
          resolve(item);
        },
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      this.#waiters.add(waiter);
    });
  }
}

export interface FrontendOptions {
  /** Number of frontends (input/output socket pairs) advertised in INIT (client_index = position). */
  frontends?: number;
  transport?: "ipc" | "tcp";
}

export class RawFrontend {
  readonly handshakeMessages = new Waitable<{
    engineIndex: number;
    frames: Buffer[];
    status: HandshakeStatus | null;
  }>();
  readonly registrations = new Waitable<{
    engineIndex: number;
    frontend: number;
    frames: Buffer[];
    response: EngineCoreReadyResponse;
  }>();
  readonly received = new Waitable<Received>();
  #callId = 1n;
  #closed = false;

  readonly handshakeAddress: string;
  readonly inputAddresses: string[];
  readonly outputAddresses: string[];

  private constructor(
    readonly handshake: Router,
    readonly inputs: Router[],
    readonly outputs: Pull[],
  ) {
    this.handshakeAddress = handshake.lastEndpoint!;
    this.inputAddresses = inputs.map((s) => s.lastEndpoint!);
    this.outputAddresses = outputs.map((s) => s.lastEndpoint!);
  }

  static async create(options: FrontendOptions = {}): Promise<RawFrontend> {
    const n = options.frontends ?? 1;
    const tcp = options.transport === "tcp";
    const address = (tag: string) => (tcp ? "tcp://127.0.0.1:0" : ipcAddress(tag));
    const handshake = new Router({ linger: 0 });
    await handshake.bind(address("hs"));
    const inputs: Router[] = [];
    const outputs: Pull[] = [];
    for (let i = 0; i < n; i++) {
      // Unbounded queues, as vLLM's make_zmq_socket sets them (vllm/utils/network_utils.py): a ROUTER drops
      // what it cannot queue for a peer, so the default 1,000-message limit lost requests when a load test
      // sent thousands faster than a busy engine read them.
      const input = new Router({ linger: 0, sendHighWaterMark: 0, receiveHighWaterMark: 0 });
      await input.bind(address(`in${i}`));
      inputs.push(input);
      const output = new Pull({ linger: 0, receiveHighWaterMark: 0 });
      await output.bind(address(`out${i}`));
      outputs.push(output);
    }
    const fe = new RawFrontend(handshake, inputs, outputs);
    fe.#startLoops();
    return fe;
  }

  /** An address set for bootstrapped mode: no handshake socket is used. */
  get bootstrapAddresses(): { inputAddress: string; outputAddress: string } {
    return { inputAddress: this.inputAddresses[0]!, outputAddress: this.outputAddresses[0]! };
  }

  #startLoops(): void {
    void (async () => {
      try {
        for await (const frames of this.handshake) {
          let status: HandshakeStatus | null = null;
          try {
            status = decodeHandshakeStatus(frames[1]!);
          } catch {
            status = null;
          }
          this.handshakeMessages.push({ engineIndex: engineIndexFromIdentity(frames[0]!), frames, status });
        }
      } catch {
        // closed
      }
    })();
    this.inputs.forEach((input, frontend) => {
      void (async () => {
        try {
          for await (const frames of input) {
            this.registrations.push({
              engineIndex: engineIndexFromIdentity(frames[0]!),
              frontend,
              frames,
              response: decodeReadyResponse(frames[1]!),
            });
          }
        } catch {
          // closed
        }
      })();
    });
    this.outputs.forEach((output, frontend) => {
      void (async () => {
        try {
          for await (const frames of output) {
            const at = performance.now();
            try {
              const message = decodeOutputMessage(frames);
              this.received.push(
                message.kind === "dead"
                  ? { kind: "dead", frontend, frames, at }
                  : { kind: "outputs", frontend, outputs: message.outputs, frames, at },
              );
            } catch (error) {
              this.received.push({ kind: "bad", frontend, error: error as Error, frames, at });
            }
          }
        } catch {
          // closed
        }
      })();
    });
  }

  /** Answers every HELLO with INIT (the engine's addresses), like a HandshakeOwner frontend. */
  async answerHellos(engineIndices: readonly number[], timeoutMs = 10_000): Promise<void> {
    await Promise.all(
      engineIndices.map(async (engineIndex) => {
        await this.handshakeMessages.wait(
          (m) => m.engineIndex === engineIndex,
          timeoutMs,
          `HELLO from ${engineIndex}`,
        );
        await this.handshake.send([
          engineIdentity(engineIndex),
          encodeHandshakeInit({
            addresses: {
              inputs: this.inputAddresses,
              outputs: this.outputAddresses,
              coordinatorInput: null,
              coordinatorOutput: null,
              frontendStatsPublishAddress: null,
            },
            parallelConfig: {},
          }),
        ]);
      }),
    );
  }

  /** Full handshake: HELLO → INIT → registration(s) → READY for every engine. */
  async connect(
    engineIndices: readonly number[],
    timeoutMs = 10_000,
  ): Promise<Map<number, EngineCoreReadyResponse>> {
    await this.answerHellos(engineIndices, timeoutMs);
    const responses = new Map<number, EngineCoreReadyResponse>();
    await Promise.all(
      engineIndices.map(async (engineIndex) => {
        await this.handshakeMessages.wait(
          (m) => m.engineIndex === engineIndex && m.status?.status === "READY",
          timeoutMs,
          `READY from ${engineIndex}`,
        );
        const registration = await this.awaitRegistrations(engineIndex, timeoutMs);
        responses.set(engineIndex, registration);
      }),
    );
    return responses;
  }

  async awaitRegistrations(engineIndex: number, timeoutMs = 10_000): Promise<EngineCoreReadyResponse> {
    let first: EngineCoreReadyResponse | undefined;
    for (let frontend = 0; frontend < this.inputs.length; frontend++) {
      const r = await this.registrations.wait(
        (m) => m.engineIndex === engineIndex && m.frontend === frontend,
        timeoutMs,
        `registration of engine ${engineIndex} on input ${frontend}`,
      );
      first ??= r.response;
    }
    return first!;
  }

  async add(engineIndex: number, request: EngineCoreRequest, frontend = 0): Promise<void> {
    await this.inputs[frontend]!.send([engineIdentity(engineIndex), ...encodeAddRequest(request)]);
  }

  async abort(engineIndex: number, requestIds: string[], frontend = 0): Promise<void> {
    await this.inputs[frontend]!.send([engineIdentity(engineIndex), ...encodeAbortRequest(requestIds)]);
  }

  async sendRaw(engineIndex: number, frames: Uint8Array[], frontend = 0): Promise<void> {
    await this.inputs[frontend]!.send([engineIdentity(engineIndex), ...frames]);
  }

  /** Sends a UTILITY call and waits for the UtilityOutput with the same call id. */
  async utility(
    engineIndex: number,
    method: string,
    args: unknown[] = [],
    options: { frontend?: number; timeoutMs?: number } = {},
  ): Promise<UtilityOutput & { received: Received }> {
    const frontend = options.frontend ?? 0;
    const callId = this.#callId++;
    await this.inputs[frontend]!.send([
      engineIdentity(engineIndex),
      ...encodeUtilityCall({ clientIndex: frontend, callId, method, args }),
    ]);
    const received = await this.received.wait(
      (m) => m.kind === "outputs" && m.outputs.utilityOutput?.callId === callId,
      options.timeoutMs ?? 10_000,
      `reply to ${method} (call ${callId})`,
    );
    return { ...(received as { outputs: EngineCoreOutputs }).outputs.utilityOutput!, received };
  }

  /** The messages received so far that carry outputs for `requestId`. */
  outputsFor(
    requestId: string,
  ): { message: EngineCoreOutputs; output: EngineCoreOutputs["outputs"][number] }[] {
    const list: { message: EngineCoreOutputs; output: EngineCoreOutputs["outputs"][number] }[] = [];
    for (const m of this.received.items) {
      if (m.kind !== "outputs") continue;
      for (const output of m.outputs.outputs)
        if (output.requestId === requestId) list.push({ message: m.outputs, output });
    }
    return list;
  }

  /** Waits for the finishing output of `requestId`; returns all its tokens and the final output. */
  async finished(requestId: string, timeoutMs = 10_000) {
    await this.received.wait(
      (m) =>
        m.kind === "outputs" &&
        m.outputs.outputs.some((o) => o.requestId === requestId && o.finishReason !== null),
      timeoutMs,
      `finish of ${requestId}`,
    );
    const outputs = this.outputsFor(requestId);
    return {
      tokens: outputs.flatMap((o) => o.output.newTokenIds),
      last: outputs.at(-1)!.output,
      messages: outputs.map((o) => o.message),
    };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.handshake.close();
    for (const s of this.inputs) s.close();
    for (const s of this.outputs) s.close();
    // libzmq leaves the socket file of a closed ipc:// listener behind: the binder removes it.
    for (const address of [this.handshakeAddress, ...this.inputAddresses, ...this.outputAddresses]) {
      const path = ipcSocketPath(address);
      if (path !== undefined) rmSync(path, { force: true });
    }
  }
}

export function request(
  requestId: string,
  sampling: Record<string, unknown> = {},
  extra: Partial<EngineCoreRequest> = {},
): EngineCoreRequest {
  return {
    requestId,
    promptTokenIds: [1, 2, 3],
    mmFeatures: null,
    samplingParams: { maxTokens: 8, stopTokenIds: [], ...sampling },
    poolingParams: null,
    arrivalTime: Date.now() / 1000,
    loraRequest: null,
    cacheSalt: null,
    dataParallelRank: null,
    ...extra,
  } as EngineCoreRequest;
}

export const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** True once `pid` is gone (or a zombie nobody reaped yet). */
export function processGone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state === "Z" || state === "X";
  } catch {
    return true;
  }
}

export async function waitUntil(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await delay(25);
  }
}
