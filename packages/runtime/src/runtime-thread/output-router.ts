// Where each engine output message goes. A step's request outputs are routed by their request ids alone
// (read from the bytes, readOutputRoute) and forwarded as raw frames to the thread(s) that own them, which
// decode them once, where they are consumed (the step's scheduler stats included). Anything else (a utility
// reply, a wave notice, stats alone, a mixed shape, or outputs no live request owns) is consumed on the
// runtime thread, so it is decoded here.
import {
  decodeOutputMessage,
  type EngineCoreOutputs,
  type OutputMessage,
  type OutputRoute,
  ProtocolError,
  readSchedulerStats,
  type SchedulerStats,
} from "@vllm-engine-core/protocol";
import { ownedFrame } from "../cloneable.js";
import type { OutputDiagnostics } from "./diagnostics.js";
import type { ThreadLane } from "./lane.js";
import type { LiveRequests } from "./live-requests.js";

/** What the router needs of its connection. */
export interface RoutedConnection {
  readonly requests: LiveRequests;
  readonly diag: OutputDiagnostics;
  /** A message consumed on the runtime thread (its utility reply, its stats). */
  consume(outputs: EngineCoreOutputs): void;
  /**
   * Stats that rode on a routed step (read alone from the frame). `informed`: the threads the step's frames
   * went to, which read the stats in their own decode of them.
   */
  onSchedulerStats(engineIndex: number, stats: SchedulerStats, informed?: ReadonlySet<ThreadLane>): void;
  onBadMessage(error: ProtocolError, frames: readonly Uint8Array[], senders: readonly number[]): void;
}

export class OutputRouter {
  readonly #connection: RoutedConnection;
  /** Output messages forwarded to owner threads (their `seq`). */
  #forwarded = 0;

  constructor(connection: RoutedConnection) {
    this.#connection = connection;
  }

  /** One output message, undecoded (`route` is its routing read, see the transport's OutputSink). */
  route(route: OutputRoute, frames: Buffer[], senders: readonly number[]): void {
    // Scheduler stats: the one place a message's `hasSchedulerStats` is looked at. A stats-only message is
    // decoded here anyway (consumeHere hands its stats on); stats riding on a step's outputs are read alone
    // (once per engine step) and the frames still go to their owners undecoded.
    const statsOnly = route.hasSchedulerStats && route.outputCount === 0 && route.finishedRequests === null;
    const stepOutputs = route.outputCount > 0 || route.finishedRequests !== null;
    if (statsOnly || !stepOutputs || route.hasUtilityOutput || route.hasWaveComplete || route.hasStartWave) {
      this.#consumeHere(frames, senders);
      return;
    }
    const owners = this.#forward(route, frames, senders);
    // Consumed here, the message's stats are handed on by the connection's consume, once.
    if (owners === null) this.#consumeHere(frames, senders);
    else if (route.hasSchedulerStats) this.#readStepStats(route, frames[0]!, owners);
  }

  /**
   * Routes a step's request outputs by id: the requests the step finishes (an output with a finish reason,
   * or `finished_requests`) end here, and the frames go to each thread that owns one of them. Returns the
   * threads the frames went to, or null when no live request owns anything in it.
   */
  #forward(route: OutputRoute, frames: Buffer[], senders: readonly number[]): ReadonlySet<ThreadLane> | null {
    const { requests, diag } = this.#connection;
    const { outputCount: n, outputFinished, requestIdKeys: keys } = route;
    const finished = route.finishedRequests;
    const length = n + (finished?.length ?? 0);
    const main = frames[0]!;
    // Per owner thread, its slot of each output's request and then of each finished id (-1: not its own):
    // the owner finds its streams by index, without hashing the ids it decodes. One owner is the common case.
    let owner: ThreadLane | undefined;
    let slots: Int32Array | undefined;
    let others: Map<ThreadLane, Int32Array> | undefined;
    let strays: number[] | undefined;
    const slotsOf = (lane: ThreadLane): Int32Array => {
      if (owner === undefined) {
        owner = lane;
        slots = new Int32Array(length).fill(-1);
      }
      if (lane === owner) return slots!;
      others ??= new Map();
      let theirs = others.get(lane);
      if (theirs === undefined) {
        theirs = new Int32Array(length).fill(-1);
        others.set(lane, theirs);
      }
      return theirs;
    };
    for (let i = 0; i < n; i++) {
      // Looked up by the id's bytes in the frame: no id string is built on this thread.
      const request = requests.getByKey(main, keys[3 * i]!, keys[3 * i + 1]!, keys[3 * i + 2]!);
      if (request === undefined) {
        if (strays === undefined) strays = [i];
        else strays.push(i);
        continue;
      }
      if (outputFinished[i]) requests.end(request, "finished");
      slotsOf(request.lane)[i] = request.slot;
    }
    if (finished !== null) {
      for (let j = 0; j < finished.length; j++) {
        const request = requests.get(finished[j]!);
        // Not counted: with include_finished_set vLLM also lists requests whose finish output came already.
        if (request === undefined) continue;
        requests.end(request, "finished");
        slotsOf(request.lane)[n + j] = request.slot;
      }
    }
    if (owner === undefined) return null;
    if (strays !== undefined) {
      const engineIndex = route.engineIndex ?? senders[0] ?? -1;
      for (const i of strays) {
        const requestId = route.requestIds[i]!;
        diag.outputForInactiveRequest(requestId, requests.endedHow(requestId), engineIndex);
      }
    }
    // Raw frames, decoded by each owner thread (which skips the outputs that are not its own); cheaper than
    // cloning decoded objects (measured; see README). Copied once into buffers of their own: a cloned view
    // would drag its whole pooled backing store along. `seq` names the message if an owner cannot decode it.
    const seq = ++this.#forwarded;
    const owned = frames.map(ownedFrame);
    const owners = new Set<ThreadLane>([owner]);
    owner.post({ t: "frames", seq, senders, frames: owned, slots: slots! }, [slots!.buffer as ArrayBuffer]);
    if (others !== undefined) {
      for (const [lane, theirs] of others) {
        owners.add(lane);
        lane.post({ t: "frames", seq, senders, frames: owned, slots: theirs }, [
          theirs.buffer as ArrayBuffer,
        ]);
      }
    }
    return owners;
  }

  /** Decodes and consumes a message that no other thread receives. */
  #consumeHere(frames: Buffer[], senders: readonly number[]): void {
    const { requests, diag } = this.#connection;
    let message: OutputMessage;
    try {
      message = decodeOutputMessage(frames);
    } catch (error) {
      this.#connection.onBadMessage(asProtocolError(error), frames, senders);
      return;
    }
    if (message.kind !== "outputs") return; // the transport handles the sentinel
    const outputs = message.outputs;
    this.#connection.consume(outputs);
    for (const output of outputs.outputs) {
      if (requests.get(output.requestId) !== undefined) continue; // cannot happen: such a message is routed
      diag.outputForInactiveRequest(
        output.requestId,
        requests.endedHow(output.requestId),
        outputs.engineIndex,
      );
    }
  }

  /**
   * The stats of a routed step, decoded alone from where the routing read found them, for this thread's
   * routing load and for the threads that got no frames of the step (`owners` read them in their own full
   * decode, which they do anyway: no second copy crosses to them). A bad stats field is left to the owner
   * threads, whose full decode reports the message back to be judged like any undecodable one.
   */
  #readStepStats(route: OutputRoute, main: Buffer, owners: ReadonlySet<ThreadLane>): void {
    let stats: SchedulerStats | null;
    try {
      stats = readSchedulerStats(main, route);
    } catch {
      return;
    }
    if (stats !== null) this.#connection.onSchedulerStats(route.engineIndex ?? 0, stats, owners);
  }
}

export function asProtocolError(error: unknown): ProtocolError {
  return error instanceof ProtocolError
    ? error
    : new ProtocolError({ struct: "EngineCoreOutputs", detail: String((error as Error)?.message ?? error) });
}
