// What the mock DP coordinator child logs (stdout, JSON lines) and what its parent tells it (IPC channel).

/** Per engine `[waiting, running, kv_cache_usage]`; a missing usage is published as 0.0. */
export type MockEngineCounts = [waiting: number, running: number, kvCacheUsage?: number];

export type MockCoordinatorEvent =
  | { event: "started"; pid: number; address: string; engineCount: number }
  /** A frontend's XSUB (un)subscribed: 0x01 / 0x00 on the XPUB. */
  | { event: "subscription"; subscribe: boolean }
  /** One `(counts, wave, engines_running)` went out; counts null on a wave-state-only publish. */
  | { event: "published"; counts: [number, number, number][] | null; wave: number; enginesRunning: boolean }
  /** A frontend's `[engine, wave]` (engine: an index, or a Python frontend's identity as hex). */
  | { event: "wakeup"; engine: number | string | null; wave: number; paused: boolean }
  /** Engine side: every engine subscribed and READY went out (the startup gate). */
  | { event: "engines-ready"; engineCount: number }
  /** Engine side: an engine's request counts arrived (`[waiting, running, kv_cache_usage]`). */
  | { event: "engine-counts"; engineIndex: number; counts: [number, number, number] }
  | { event: "fault"; detail: string }
  | { event: "exit"; reason: string };

/** Without an engine side only: publish these counts now. */
export type CoordinatorCommand = {
  op: "publish";
  counts: MockEngineCounts[];
  /** Set the coordinator's current wave first (default: unchanged). */
  wave?: number;
  /** Set engines_running first (default: unchanged). */
  enginesRunning?: boolean;
};
