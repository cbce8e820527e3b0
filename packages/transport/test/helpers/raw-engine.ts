// A hand-driven engine built from raw zeromq sockets (real sockets in the test thread), for protocol
// misbehaviour the mock engine cannot be told to produce, and for precise control over each startup stage.
import {
  decodeHandshakeInit,
  ENGINE_CORE_DEAD,
  type EngineCoreOutputsInit,
  type EngineCoreReadyResponseInit,
  type EngineHandshakeMetadata,
  encodeEngineCoreOutputs,
  encodeHandshakeStatus,
  encodeReadyResponse,
  engineIdentity,
} from "@vllm-engine-core/protocol";
import * as zmq from "zeromq";
import { SocketSet } from "../../src/sockets.ts";

export function readyResponse(index: number, overrides: Partial<EngineCoreReadyResponseInit> = {}) {
  return {
    maxModelLen: 4096,
    numGpuBlocks: 1000,
    blockSize: 16,
    dpStatsAddress: null,
    dtype: "bfloat16",
    vllmVersion: "0.26.0.dev-raw",
    worldSize: 1,
    dataParallelSize: 1,
    tensorParallelSize: 1,
    pipelineParallelSize: 1,
    decodeContextParallelSize: 1,
    dataParallelRank: index,
    maxNumSeqs: 256,
    maxNumBatchedTokens: 8192,
    instanceId: `raw-${index}`,
    ...overrides,
  } satisfies EngineCoreReadyResponseInit;
}

async function receiveWithin(socket: zmq.Dealer, ms: number, what: string): Promise<Buffer[]> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      socket.receive(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`raw engine: no ${what} within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export class RawEngine {
  readonly identity: Uint8Array;
  handshake: zmq.Dealer | undefined;
  input: zmq.Dealer | undefined;
  output: zmq.Push | undefined;
  readonly #sockets: zmq.Socket[] = [];

  constructor(
    readonly index: number,
    identity?: Uint8Array,
  ) {
    this.identity = identity ?? engineIdentity(index);
  }

  #dealer(address: string): zmq.Dealer {
    const socket = new zmq.Dealer({ routingId: Buffer.from(this.identity) as unknown as string, linger: 0 });
    socket.connect(address);
    this.#sockets.push(socket);
    return socket;
  }

  connectHandshake(address: string): zmq.Dealer {
    this.handshake ??= this.#dealer(address);
    return this.handshake;
  }

  async sendStatus(status: "HELLO" | "READY" | string, address?: string): Promise<void> {
    const socket = this.handshake ?? this.connectHandshake(address!);
    await socket.send(encodeHandshakeStatus({ status, local: false, headless: true }));
  }

  /** HELLO, then the INIT reply. */
  async hello(address: string, timeoutMs = 10_000): Promise<EngineHandshakeMetadata> {
    await this.sendStatus("HELLO", address);
    const frames = await receiveWithin(this.handshake!, timeoutMs, "INIT");
    return decodeHandshakeInit(frames[0]!);
  }

  async register(inputAddress: string, payload?: Uint8Array): Promise<void> {
    this.input ??= this.#dealer(inputAddress);
    await this.input.send(payload ?? encodeReadyResponse(readyResponse(this.index)));
  }

  connectOutput(outputAddress: string): zmq.Push {
    if (this.output === undefined) {
      this.output = new zmq.Push({ linger: 0 });
      this.output.connect(outputAddress);
      this.#sockets.push(this.output);
    }
    return this.output;
  }

  /** The whole startup as vLLM's EngineCoreProc orders it: HELLO, INIT, registration, READY. */
  async startup(handshakeAddress: string): Promise<EngineHandshakeMetadata> {
    const init = await this.hello(handshakeAddress);
    await this.register(init.addresses.inputs[0]!);
    this.connectOutput(init.addresses.outputs[0]!);
    await this.sendStatus("READY");
    return init;
  }

  async pushOutputs(outputs: EngineCoreOutputsInit): Promise<void> {
    await this.output!.send(encodeEngineCoreOutputs({ engineIndex: this.index, ...outputs }));
  }

  async pushFrames(frames: Uint8Array[]): Promise<void> {
    await this.output!.send(frames);
  }

  async pushDead(): Promise<void> {
    await this.output!.send(ENGINE_CORE_DEAD);
  }

  receiveRequest(timeoutMs = 10_000): Promise<Buffer[]> {
    return receiveWithin(this.input!, timeoutMs, "request on the input socket");
  }

  close(): void {
    for (const socket of this.#sockets) if (!socket.closed) socket.close();
  }
}

/** Binds plain ROUTERs on `addresses` (proves they are free), then releases them for real again. */
export async function assertBindable(addresses: readonly string[]): Promise<void> {
  const sockets = new SocketSet();
  try {
    for (const address of addresses) {
      await sockets.bind(sockets.add(new zmq.Router({ linger: 0 })), address, "input");
    }
  } finally {
    await sockets.closeAll();
  }
}
