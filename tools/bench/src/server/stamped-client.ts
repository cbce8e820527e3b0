// The engine client handed to the server under test, with one addition: for each output the server reads,
// it notes the request's cumulative token count and the engine's send stamp of the message that carried it
// (`EngineCoreOutputStream.lastTimestamp`, the mock engine's CLOCK_MONOTONIC send stamp). The load
// generator sees the same cumulative count in each SSE event (`continuous_usage_stats`), so the two join
// exactly, per token count, into "engine output → SSE bytes at the HTTP client". Nothing of the server is
// changed: `client` is the seam `createServer` takes.
import type { EngineCoreClient, EngineCoreOutput } from "@vllm-engine-core/client";
import type { EngineClient } from "@vllm-engine-core/server";

export interface EngineStamps {
  /** Cumulative generated tokens after each output the server read. */
  counts: number[];
  /** Engine send time of each (CLOCK_MONOTONIC ms). */
  stamps: number[];
}

export class StampedClient {
  /** Per server request id; filled only while `recording`. */
  readonly stamps = new Map<string, EngineStamps>();
  recording = false;
  readonly client: EngineClient;

  constructor(inner: EngineCoreClient) {
    const self = this;
    this.client = {
      get healthError() {
        return inner.healthError;
      },
      get maxModelLen() {
        return inner.maxModelLen;
      },
      get vllmVersion() {
        return inner.vllmVersion;
      },
      async call(request, options) {
        const stream = await inner.call(request, options);
        const next = stream.next.bind(stream);
        let count = 0;
        const own: EngineStamps = { counts: [], stamps: [] };
        // Keyed by the response's id: the server sends it as `externalReqId` and makes the engine's id
        // unique with a suffix, as vLLM's `assign_request_id` does.
        self.stamps.set(request.externalReqId ?? request.requestId, own);
        stream.next = async (): Promise<IteratorResult<EngineCoreOutput>> => {
          const r = await next();
          if (!r.done) {
            count += r.value.newTokenIds.length;
            if (self.recording) {
              own.counts.push(count);
              own.stamps.push(stream.lastTimestamp * 1000);
            }
          }
          return r;
        };
        return stream;
      },
    } as EngineClient;
  }

  reset(): void {
    for (const s of this.stamps.values()) {
      s.counts.length = 0;
      s.stamps.length = 0;
    }
  }
}
