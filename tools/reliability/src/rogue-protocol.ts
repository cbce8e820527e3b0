// Messages between a test process and its rogue engine child (Node IPC, "advanced" serialization).

/** Output traffic the rogue engine can push on command. */
export type InjectionKind =
  | "garbage" // one frame starting with 0xc1, the byte msgpack never uses
  | "extra-frames" // a valid (empty) EngineCoreOutputs followed by 2 aux frames nothing references
  | "sentinel-plus-frame" // ENGINE_CORE_DEAD followed by a second frame (not the 1-frame sentinel)
  | "aux-index-out-of-range" // a logprobs output whose tensors point at aux frames that were not sent
  | "unknown-request" // tokens for a request id the client never submitted
  | "second-finish" // a finished output for a request that already finished
  | "unknown-utility" // a utility reply for a call id nobody made
  // Undecodable messages whose routing fields can still be read (see the runtime's output-faults.ts):
  | "bad-token-ids" // an output for `requestId` whose new_token_ids is a str (next to a valid output of `otherRequestId`)
  | "bad-token-ids-finishing" // the same, where the valid output is `otherRequestId`'s last (finish_reason STOP)
  | "mixed-shape"; // tokens for `requestId` and a utility reply for `callId` in one message

/**
 * Utility methods the rogue engine treats specially (every other call succeeds with `true`):
 * ROGUE_HOLD_METHOD is never answered; ROGUE_BAD_RESULT_METHOD is answered with a result that is not a
 * UtilityResult (undecodable at utility_output.result, call id readable).
 */
export const ROGUE_HOLD_METHOD = "rogue_hold";
export const ROGUE_BAD_RESULT_METHOD = "rogue_bad_result";

export const INJECTION_KINDS: readonly InjectionKind[] = [
  "garbage",
  "extra-frames",
  "sentinel-plus-frame",
  "aux-index-out-of-range",
  "unknown-request",
  "second-finish",
  "unknown-utility",
  "bad-token-ids",
  "bad-token-ids-finishing",
  "mixed-shape",
];

export interface FuzzStats {
  seed: number;
  /** Rogue messages pushed (valid step outputs of live requests not counted). */
  sent: number;
  random: number;
  mutated: number;
  /** Messages whose frames were all empty. */
  empty: number;
  /** Candidates generated and not sent because they did not decode (`decodableOnly`). */
  discarded: number;
}

export type RogueCommand =
  | {
      type: "inject";
      id: number;
      kind: InjectionKind;
      requestId?: string;
      otherRequestId?: string;
      callId?: number;
    }
  | { type: "fuzz"; id: number; seconds: number; seed: number; decodableOnly: boolean }
  | { type: "finished"; id: number }
  | { type: "stop"; id: number };

export type RogueReply =
  | { type: "ready"; pid: number }
  | { type: "injected"; id: number; frames: number }
  | { type: "fuzzed"; id: number; stats: FuzzStats }
  | { type: "finishedList"; id: number; requestIds: string[] }
  | { type: "error"; id: number; message: string };
