import type {
  EngineCoreReadyResponse,
  EngineLoadCounts,
  OutputRoute,
  ProtocolError,
} from "@vllm-engine-core/protocol";

export interface ConnectedEngine {
  /** Engine index (data-parallel rank) decoded from the identity. */
  index: number;
  /** 2-byte little-endian routing identity. */
  identity: Uint8Array;
  /** Decoded input-socket registration. */
  readyResponse: EngineCoreReadyResponse;
  /**
   * The output PULL endpoint this engine pushes to. In handshake-owner mode with the default output bind each
   * engine gets its own (its INIT names it), so an ENGINE_CORE_DEAD sentinel — which carries no engine index —
   * is attributed by the socket it arrives on; otherwise every engine shares one.
   */
  outputAddress: string;
}

export interface OutputSink {
  /**
   * One call per ZMQ message on the output PULL (except the ENGINE_CORE_DEAD sentinel), in arrival order,
   * undecoded: `frames` are the raw received Buffers and `route` their routing-level read
   * (`readOutputRoute` of the codec: engine index, request ids, finish flags, utility call id), which is
   * complete — the msgpack structure is intact. The transport never fully decodes an output message that
   * reads this way: the sink decides what to decode and on which thread (the full decode can still reject
   * a field's value or the message's shape; the sink reports that itself). `senders`: as for onBadMessage.
   */
  onOutputs(route: OutputRoute, frames: Buffer[], senders: readonly number[]): void;
  /**
   * An engine is dead: it sent ENGINE_CORE_DEAD, its connection vanished or its output socket failed.
   * engineIndex is null only when the coordinator is gone (every engine). Called at most once per engine index.
   */
  onEngineDead(engineIndex: number | null, reason: string): void;
  /**
   * An output message whose msgpack structure is broken (its routing read is incomplete; the error is the
   * full decoder's): reported, the loop keeps running.
   * `senders`: the indices of the engines that push to the output socket it arrived on (one engine with the
   * default per-engine output sockets), so the receiver can tell which engine sent it.
   */
  onBadMessage(error: ProtocolError, frames: Buffer[], senders: readonly number[]): void;
}

/** Wave state of the data-parallel coordinator, as far as this frontend knows it. */
export interface CoordinatorState {
  currentWave: number;
  enginesRunning: boolean;
  /**
   * The latest per-engine `[waiting, running(, kv_cache_usage)]` an external coordinator published (by DP
   * rank; a publish without counts keeps the previous ones, as DPAsyncMPClient does); null before any.
   */
  counts?: readonly EngineLoadCounts[] | null;
}

/** Frontend side of the DP coordinator (present only when a coordinator was configured). */
export interface CoordinatorLink {
  readonly mode: "inproc" | "external";
  /** Latest known wave state; stamp `currentWave` into every ADD. */
  state(): CoordinatorState;
  /**
   * Call before sending a request to `engineIndex`. When the engines are paused this starts a new wave
   * (in-proc: START_DP_WAVE broadcast; external: wake-up to the coordinator) and flips the state to running.
   */
  notifyRequest(engineIndex: number): Promise<void>;
}

export interface EngineTransport {
  /** Real bound endpoints (port read back for :0). */
  readonly inputAddress: string;
  /** The first engine's output endpoint (the only one unless engines have their own; see ConnectedEngine). */
  readonly outputAddress: string;
  /** Sorted by identity bytes. */
  readonly engines: readonly ConnectedEngine[];
  /** Null unless connectTransport was given a coordinator. */
  readonly coordinator: CoordinatorLink | null;
  startOutputLoop(sink: OutputSink): void;
  /**
   * frames = [type, payload, ...aux]; one serial queue per socket. Do not mutate the frames until the
   * promise settles.
   */
  send(engineIndex: number, frames: readonly Uint8Array[]): Promise<void>;
  /** Idempotent; closes every socket with linger 0, stops loops, clears timers. */
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** Aborting it at any stage closes every socket opened so far and rejects with its reason. */
  signal?: AbortSignal;
}
