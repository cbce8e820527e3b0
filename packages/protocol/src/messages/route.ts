// Routing-level read of an EngineCoreOutputs message (output socket, frame 0): which engine sent it, the
// request ids it carries, the utility call it answers. Only the fields that route are read; every other
// value is skipped by its msgpack header without being decoded or validated, so the read is cheap (no
// tensors, stats or token lists built) and it still works on a message the full decoder rejects — as long as
// the msgpack structure itself is intact. It never throws. Aux frames are not needed: tensor data that
// points at them is an int or an ext inside the main frame, skipped like any other value.
import { asciiString } from "../msgpack/reader.js";
import { skipValues, u32 } from "../msgpack/skip.js";
import { EngineCoreOutputCodec, EngineCoreOutputsCodec, UtilityOutputCodec } from "../structs/output.js";
import { FNV_OFFSET, FNV_PRIME } from "./request-id-hash.js";

export interface OutputRoute {
  /**
   * The whole message was walked (the top-level array and everything in it, nothing after it) and every
   * routing field had its wire type: `requestIds`, `finishedRequests` and `utilityCallId` are then all the
   * message names. False: the walk stopped early; the lists hold what was read before that point.
   */
  complete: boolean;
  /** `engine_index`, or null when it is not a safe integer (or the message is too short to hold it). */
  engineIndex: number | null;
  /**
   * `request_id` of each element of `outputs`, in wire order. Built from `requestIdKeys` when first read: a
   * router that looks requests up by their bytes (requestIdHash) never builds these strings.
   */
  readonly requestIds: string[];
  /** How many request ids of `outputs` were read (the length of `requestIds`). */
  outputCount: number;
  /**
   * Per element of `outputs`, three ints: where its request id's UTF-8 bytes start and end in the frame
   * (`[start, end)`), and requestIdHash of those bytes. Valid for the first `outputCount` elements.
   */
  requestIdKeys: Int32Array;
  /** `finish_reason` is not nil, for each element of `outputs` (parallel to `requestIds`): its last output. */
  outputFinished: boolean[];
  /** `finished_requests` as sent (null when nil or absent). */
  finishedRequests: string[] | null;
  /** `scheduler_stats` is not nil. */
  hasSchedulerStats: boolean;
  /**
   * Where the encoded `scheduler_stats` value lies in the frame (`[start, end)`), when it is not nil and the
   * walk got past it: readSchedulerStats(main, route) decodes it from there without walking the frame again.
   */
  schedulerStatsSpan: readonly [start: number, end: number] | null;
  /** `utility_output` is not nil. */
  hasUtilityOutput: boolean;
  /** `utility_output.call_id`, or null (no utility output, or its call id is not an int). */
  utilityCallId: bigint | null;
  /** `wave_complete` / `start_wave` are not nil. */
  hasWaveComplete: boolean;
  hasStartWave: boolean;
}

const NO_KEYS = new Int32Array(0);

class RouteRead implements OutputRoute {
  complete = false;
  engineIndex: number | null = null;
  outputCount = 0;
  requestIdKeys = NO_KEYS;
  outputFinished: boolean[] = [];
  finishedRequests: string[] | null = null;
  hasSchedulerStats = false;
  schedulerStatsSpan: readonly [start: number, end: number] | null = null;
  hasUtilityOutput = false;
  utilityCallId: bigint | null = null;
  hasWaveComplete = false;
  hasStartWave = false;
  readonly #main: Uint8Array;
  #requestIds: string[] | undefined;

  constructor(main: Uint8Array) {
    this.#main = main;
  }

  get requestIds(): string[] {
    if (this.#requestIds === undefined) {
      const ids: string[] = new Array(this.outputCount);
      const keys = this.requestIdKeys;
      // The bytes were checked as UTF-8 when they were read.
      for (let i = 0; i < this.outputCount; i++) ids[i] = textAt(this.#main, keys[3 * i]!, keys[3 * i + 1]!)!;
      this.#requestIds = ids;
    }
    return this.#requestIds;
  }
}

// Positions from the field tables, so the route follows the schema it routes for.
const at = (fields: readonly { wire: string }[], wire: string): number => {
  const i = fields.findIndex((f) => f.wire === wire);
  if (i < 0) throw new Error(`route: no field ${wire}`);
  return i;
};
const ENGINE_INDEX = at(EngineCoreOutputsCodec.fields, "engine_index");
const OUTPUTS = at(EngineCoreOutputsCodec.fields, "outputs");
const SCHEDULER_STATS = at(EngineCoreOutputsCodec.fields, "scheduler_stats");
const UTILITY_OUTPUT = at(EngineCoreOutputsCodec.fields, "utility_output");
const FINISHED_REQUESTS = at(EngineCoreOutputsCodec.fields, "finished_requests");
const WAVE_COMPLETE = at(EngineCoreOutputsCodec.fields, "wave_complete");
const START_WAVE = at(EngineCoreOutputsCodec.fields, "start_wave");
const FINISH_REASON = at(EngineCoreOutputCodec.fields, "finish_reason");
// The readers below take the routing field as the first element of its struct.
if (at(EngineCoreOutputCodec.fields, "request_id") !== 0 || at(UtilityOutputCodec.fields, "call_id") !== 0) {
  throw new Error("route: request_id / call_id moved");
}

const NIL = 0xc0;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Position after the last header or value read by the helpers below (one thread, never re-entered). */
let next = 0;

/** Element count of an array header at `pos` (sets `next` past the header), or -1. */
function arrayHeader(buf: Uint8Array, pos: number, end: number): number {
  if (pos >= end) return -1;
  const b = buf[pos]!;
  if ((b & 0xf0) === 0x90) {
    next = pos + 1;
    return b & 0x0f;
  }
  if (b === 0xdc && pos + 3 <= end) {
    next = pos + 3;
    return (buf[pos + 1]! << 8) | buf[pos + 2]!;
  }
  if (b === 0xdd && pos + 5 <= end) {
    next = pos + 5;
    return u32(buf, pos + 1);
  }
  return -1;
}

/** Start of the str whose bounds strBounds() read last (its end is `next`). */
let strStart = 0;

/** Whether a str header at `pos` declares bytes that fit before `end`; sets `strStart` and `next` to them. */
function strBounds(buf: Uint8Array, pos: number, end: number): boolean {
  if (pos >= end) return false;
  const b = buf[pos]!;
  let start: number;
  let n: number;
  if ((b & 0xe0) === 0xa0) {
    start = pos + 1;
    n = b & 0x1f;
  } else if (b === 0xd9 && pos + 2 <= end) {
    start = pos + 2;
    n = buf[pos + 1]!;
  } else if (b === 0xda && pos + 3 <= end) {
    start = pos + 3;
    n = (buf[pos + 1]! << 8) | buf[pos + 2]!;
  } else if (b === 0xdb && pos + 5 <= end) {
    start = pos + 5;
    n = u32(buf, pos + 1);
  } else {
    return false;
  }
  if (start + n > end) return false;
  strStart = start;
  next = start + n;
  return true;
}

/** The str at `pos` (sets `next` past it), or null when it is not a str or not valid UTF-8. */
function str(buf: Uint8Array, pos: number, end: number): string | null {
  return strBounds(buf, pos, end) ? textAt(buf, strStart, next) : null;
}

/** The UTF-8 text of `buf[start, stop)`, or null when it is not valid UTF-8. */
function textAt(buf: Uint8Array, start: number, stop: number): string | null {
  const ascii = stop - start <= 64 ? asciiString(buf, start, stop) : null;
  if (ascii !== null) return ascii;
  try {
    return utf8.decode(buf.subarray(start, stop));
  } catch {
    return null;
  }
}

/**
 * The str at `pos` as a routing key: sets `strStart` and `next` to its bytes' bounds and returns
 * requestIdHash of them, or -1 when it is not a str or not valid UTF-8. No string is built.
 */
function strKey(buf: Uint8Array, pos: number, end: number): number {
  if (!strBounds(buf, pos, end)) return -1;
  const start = strStart;
  const stop = next;
  // requestIdHash, inlined with the ASCII test: one pass over the bytes.
  let h = FNV_OFFSET;
  let any = 0;
  for (let i = start; i < stop; i++) {
    const c = buf[i]!;
    any |= c;
    h = Math.imul(h ^ c, FNV_PRIME);
  }
  if (any & 0x80 && textAt(buf, start, stop) === null) return -1;
  return h & 0x3fffffff;
}

/** The int at `pos` as a bigint (sets `next` past it), or null when it is not a msgpack int. */
function int(buf: Uint8Array, pos: number, end: number): bigint | null {
  if (pos >= end) return null;
  const b = buf[pos]!;
  if (b < 0x80) {
    next = pos + 1;
    return BigInt(b);
  }
  if (b >= 0xe0) {
    next = pos + 1;
    return BigInt(b - 256);
  }
  const size = b === 0xcc || b === 0xd0 ? 1 : b === 0xcd || b === 0xd1 ? 2 : b === 0xce || b === 0xd2 ? 4 : 8;
  if (b < 0xcc || b > 0xd3 || pos + 1 + size > end) return null;
  let v = 0n;
  for (let i = 1; i <= size; i++) v = (v << 8n) | BigInt(buf[pos + i]!);
  if (b >= 0xd0) v = BigInt.asIntN(size * 8, v);
  next = pos + 1 + size;
  return v;
}

/** Reads the routing fields of `main` (frame 0 of an output message); see OutputRoute. Never throws. */
export function readOutputRoute(main: Uint8Array): OutputRoute {
  const route = new RouteRead(main);
  const buf = main;
  const end = main.byteLength;
  const fields = arrayHeader(buf, 0, end);
  if (fields < 0) return route;
  let pos = next;
  for (let i = 0; i < fields; i++) {
    if (pos >= end) return route;
    const b = buf[pos]!;
    if (i === OUTPUTS) {
      const count = arrayHeader(buf, pos, end);
      if (count < 0) return route;
      pos = next;
      // At most one element per remaining byte: a count beyond that is a broken header, not a big array.
      const keys = new Int32Array(3 * Math.min(count, end - pos));
      route.requestIdKeys = keys;
      for (let j = 0; j < count; j++) {
        const length = arrayHeader(buf, pos, end);
        if (length < 1) return route;
        const hash = strKey(buf, next, end);
        if (hash < 0) return route;
        keys[3 * j] = strStart;
        keys[3 * j + 1] = next;
        keys[3 * j + 2] = hash;
        route.outputCount = j + 1;
        // Fields up to finish_reason, its nil test, then the rest (a short array has none: nil).
        let finished = false;
        let rest = length - 1;
        if (length > FINISH_REASON) {
          pos = skipValues(buf, next, end, FINISH_REASON - 1);
          if (pos < 0 || pos >= end) return route;
          finished = buf[pos] !== NIL;
          rest = length - FINISH_REASON;
        } else {
          pos = next;
        }
        route.outputFinished.push(finished);
        pos = skipValues(buf, pos, end, rest);
        if (pos < 0) return route;
      }
      continue;
    }
    if (i === UTILITY_OUTPUT && b !== NIL) {
      route.hasUtilityOutput = true;
      const length = arrayHeader(buf, pos, end);
      if (length < 1) return route;
      const callId = int(buf, next, end);
      if (callId === null) return route;
      route.utilityCallId = callId;
      pos = skipValues(buf, next, end, length - 1);
      if (pos < 0) return route;
      continue;
    }
    if (i === FINISHED_REQUESTS && b !== NIL) {
      const count = arrayHeader(buf, pos, end);
      if (count < 0) return route;
      pos = next;
      const finished: string[] = [];
      for (let j = 0; j < count; j++) {
        const requestId = str(buf, pos, end);
        if (requestId === null) return route;
        finished.push(requestId);
        pos = next;
      }
      route.finishedRequests = finished;
      continue;
    }
    if (i === ENGINE_INDEX) {
      const index = int(buf, pos, end);
      if (
        index !== null &&
        index >= BigInt(Number.MIN_SAFE_INTEGER) &&
        index <= BigInt(Number.MAX_SAFE_INTEGER)
      )
        route.engineIndex = Number(index);
    } else if (i === SCHEDULER_STATS && b !== NIL) {
      route.hasSchedulerStats = true;
      const stop = skipValues(buf, pos, end, 1);
      if (stop < 0) return route;
      route.schedulerStatsSpan = [pos, stop];
      pos = stop;
      continue;
    } else if (i === WAVE_COMPLETE) {
      route.hasWaveComplete = b !== NIL;
    } else if (i === START_WAVE) {
      route.hasStartWave = b !== NIL;
    }
    pos = skipValues(buf, pos, end, 1);
    if (pos < 0) return route;
  }
  route.complete = pos === end;
  return route;
}
