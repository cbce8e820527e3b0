// A bare frontend that owns its ZeroMQ sockets on the CALLING thread — the "before" of the probe and
// the single-thread ceiling of the benchmark. Probe/bench-only code: the product never does this.
//
// It speaks the same handshake as the product's transport (handshake-owner mode: bind input ROUTER and
// output PULL on tcp://host:0, bind the handshake ROUTER, HELLO → INIT, READY, registration on the input
// ROUTER, close the handshake ROUTER) and keeps the same sockets open with the same pending receives
// afterwards (input ROUTER for disconnect notifications, output PULL for outputs), so its descriptor
// footprint is the product's, only on a different thread.
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
  engineIndexFromIdentity,
} from "@vllm-engine-core/protocol";
import * as zmq from "zeromq";

/** libzmq's ZMQ_FD socket option: the signaler descriptor a poller watches. */
const ZMQ_FD = 14;

export interface DirectFrontendOptions {
  handshakeAddress: string;
  /** Host of the tcp://host:0 binds for input and output. Default 127.0.0.1. */
  host?: string;
  engineCount?: number;
  /** Bound on each handshake receive. Default 30 s. */
  timeoutMs?: number;
}

export interface DirectEngine {
  index: number;
  identity: Uint8Array;
  readyResponse: EngineCoreReadyResponse;
}

/** Thrown when the engine does not follow the handshake (probe-only, so plain and explicit). */
export class DirectHandshakeError extends Error {
  override readonly name = "DirectHandshakeError";
  readonly code = "DIRECT_HANDSHAKE";
}

async function receiveWithin(socket: zmq.Router, timeoutMs: number, stage: string): Promise<Buffer[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new DirectHandshakeError(
            `no ${stage} within ${timeoutMs} ms: is the engine started and pointed at this address?`,
          ),
        ),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([socket.receive(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export class DirectFrontend {
  readonly inputAddress: string;
  readonly outputAddress: string;
  readonly handshakeAddress: string;
  readonly engines: readonly DirectEngine[];
  readonly #input: zmq.Router;
  readonly #output: zmq.Pull;
  #sendChain: Promise<void> = Promise.resolve();
  #loop: Promise<void> | undefined;
  #closed = false;
  // Pending receives do not keep Node alive; an open frontend does.
  readonly #keepAlive = setInterval(() => undefined, 2 ** 31 - 1);

  private constructor(
    input: zmq.Router,
    output: zmq.Pull,
    addresses: { input: string; output: string; handshake: string },
    engines: DirectEngine[],
  ) {
    this.#input = input;
    this.#output = output;
    this.inputAddress = addresses.input;
    this.outputAddress = addresses.output;
    this.handshakeAddress = addresses.handshake;
    this.engines = engines;
    void this.#watchInput();
  }

  static async connect(options: DirectFrontendOptions): Promise<DirectFrontend> {
    const host = options.host ?? "127.0.0.1";
    const engineCount = options.engineCount ?? 1;
    const timeoutMs = options.timeoutMs ?? 30_000;
    const input = new zmq.Router({
      linger: 0,
      sendHighWaterMark: 0,
      receiveHighWaterMark: 0,
      mandatory: true,
    });
    const output = new zmq.Pull({ linger: 0, receiveHighWaterMark: 0 });
    const handshake = new zmq.Router({ linger: 0 });
    try {
      await input.bind(`tcp://${host}:0`);
      await output.bind(`tcp://${host}:0`);
      await handshake.bind(options.handshakeAddress);
      const addresses = {
        input: input.lastEndpoint!,
        output: output.lastEndpoint!,
        handshake: handshake.lastEndpoint ?? options.handshakeAddress,
      };
      const init = encodeHandshakeInit({
        addresses: {
          inputs: [addresses.input],
          outputs: [addresses.output],
          coordinatorInput: null,
          coordinatorOutput: null,
          frontendStatsPublishAddress: null,
        },
        parallelConfig: {},
      });
      const hello = new Set<string>();
      const ready = new Set<string>();
      while (ready.size < engineCount) {
        const frames = await receiveWithin(
          handshake,
          timeoutMs,
          hello.size < engineCount ? "HELLO" : "READY",
        );
        if (frames.length !== 2)
          throw new DirectHandshakeError(`handshake message with ${frames.length} frames`);
        const [id, payload] = frames as [Buffer, Buffer];
        const status = decodeHandshakeStatus(payload);
        const key = id.toString("hex");
        if (status.status === "HELLO" && !hello.has(key)) {
          hello.add(key);
          await handshake.send([id, init]);
        } else if (status.status === "READY" && hello.has(key)) {
          ready.add(key);
        } else {
          throw new DirectHandshakeError(`unexpected ${status.status} from engine identity ${key}`);
        }
      }
      handshake.close();
      const engines: DirectEngine[] = [];
      while (engines.length < engineCount) {
        const [id, payload] = (await receiveWithin(input, timeoutMs, "input registration")) as [
          Buffer,
          Buffer,
        ];
        engines.push({
          index: engineIndexFromIdentity(id),
          identity: Uint8Array.from(id),
          readyResponse: decodeReadyResponse(payload),
        });
      }
      engines.sort((a, b) => Buffer.compare(a.identity, b.identity));
      return new DirectFrontend(input, output, addresses, engines);
    } catch (error) {
      for (const s of [input, output, handshake]) if (!s.closed) s.close();
      throw error;
    }
  }

  /** ZMQ_FD of each open socket (the descriptors a poller on this thread watches). */
  signalerFds(): number[] {
    const get = (s: zmq.Socket) =>
      (s as unknown as { getInt32Option(o: number): number }).getInt32Option(ZMQ_FD);
    return [this.#input, this.#output].filter((s) => !s.closed).map(get);
  }

  /** TCP ports this frontend listens on (input, output; the handshake ROUTER is closed after startup). */
  tcpPorts(): number[] {
    return [this.inputAddress, this.outputAddress].map((a) => Number(/:(\d+)$/.exec(a)?.[1] ?? Number.NaN));
  }

  /** ADD to `engineIndex` (default: the first engine). Sends are serialised: one in flight per socket. */
  submit(request: EngineCoreRequest, engineIndex?: number): Promise<void> {
    return this.#send(this.#identity(engineIndex), encodeAddRequest(request));
  }

  abort(requestIds: readonly string[], engineIndex?: number): Promise<void> {
    return this.#send(this.#identity(engineIndex), encodeAbortRequest(requestIds));
  }

  /**
   * Receives and decodes every output message on this thread and hands it to `onOutputs`, until close().
   * `onDead` is called for the ENGINE_CORE_DEAD sentinel.
   */
  startOutputLoop(
    onOutputs: (outputs: EngineCoreOutputs) => void,
    onDead: () => void = () => undefined,
  ): void {
    this.startRawOutputLoop((frames) => {
      const message = decodeOutputMessage(frames);
      if (message.kind === "dead") onDead();
      else onOutputs(message.outputs);
    });
  }

  /** Like startOutputLoop, without decoding: the received frames as they are (for recording). */
  startRawOutputLoop(onFrames: (frames: Buffer[]) => void): void {
    if (this.#loop !== undefined) throw new Error("the output loop is already running");
    this.#loop = (async () => {
      for (;;) {
        let frames: Buffer[];
        try {
          frames = await this.#output.receive();
        } catch {
          return; // closed
        }
        onFrames(frames);
      }
    })();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#keepAlive);
    await this.#sendChain.catch(() => undefined);
    this.#input.close();
    this.#output.close();
    await this.#loop;
  }

  #identity(engineIndex: number | undefined): Uint8Array {
    const engine =
      engineIndex === undefined ? this.engines[0] : this.engines.find((e) => e.index === engineIndex);
    if (engine === undefined) throw new RangeError(`no engine with index ${engineIndex}`);
    return engine.identity;
  }

  #send(identity: Uint8Array, frames: Uint8Array[]): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("DirectFrontend is closed"));
    const next = this.#sendChain.then(() => this.#input.send([identity, ...frames]));
    this.#sendChain = next.catch(() => undefined);
    return next;
  }

  async #watchInput(): Promise<void> {
    // Like the product: keep a receive pending on the input ROUTER (disconnect notifications arrive there).
    for (;;) {
      try {
        await this.#input.receive();
      } catch {
        return;
      }
    }
  }
}
