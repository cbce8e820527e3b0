// Tensors in outputs as they arrive over a real socket: zeromq.js hands the output loop Node Buffers (each
// frame its own memory), inline ext-3 tensors sit at arbitrary offsets inside the main frame, and the decoded
// objects then cross a thread boundary by structured clone (as the runtime posts them when one engine step
// concerns several threads). Issue 10: the unaligned-tensor copy used Buffer#slice (a view), so logprobs
// were read from the start of the frame.
import type { EngineCoreOutputs, Tensor } from "@vllm-engine-core/protocol";
import { afterAll, describe, expect, it } from "vitest";
import { ipcDir } from "./helpers/addresses.ts";
import { useCleanups } from "./helpers/cleanup.ts";
import { RawEngine } from "./helpers/raw-engine.ts";
import { isOutputs, TransportWorker } from "./helpers/worker-harness.ts";
import type { WorkerEvent } from "./worker/protocol.ts";

const ipc = ipcDir();
const defer = useCleanups();
afterAll(() => ipc.remove());

async function connectedToOneRawEngine() {
  const handshakeAddress = ipc.address("hs");
  const w = new TransportWorker();
  defer(() => w.exit());
  const connecting = w.connect({ config: { mode: "handshake-owner", handshakeAddress, engineCount: 1 } });
  const engine = new RawEngine(0);
  defer(() => engine.close());
  await engine.startup(handshakeAddress);
  await connecting;
  await w.request({ op: "start-output" });
  return { w, engine };
}

const values = (t: Tensor) => Array.from(t.data as ArrayLike<number | bigint>);

describe("tensors received over a socket", () => {
  it("inline logprobs at unaligned offsets and an aux-frame tensor decode to exactly what the engine sent", async () => {
    const { w, engine } = await connectedToOneRawEngine();
    // vLLM's sampled logprobs (LogprobsLists, vllm/v1/outputs.py): int64 ids and ranks, float32 logprobs.
    const ids = BigInt64Array.of(3n, 17n, 42n, 9007199254740993n, 5n, 6n);
    const logprobs = Float32Array.of(-0.25, -1.5, -3, -0.125, -7.75, -2);
    const ranks = BigInt64Array.of(3n, 1n);
    const pooled = Float32Array.from({ length: 100 }, (_, i) => i / 4 - 3); // 400 B ≥ 256 → aux frame
    await engine.pushOutputs({
      outputs: [
        {
          requestId: "req-12", // puts every inline tensor at an offset not aligned for its dtype
          newTokenIds: [3, 5],
          newLogprobs: {
            logprobTokenIds: { dtype: "<i8", shape: [2, 3], data: ids },
            logprobs: { dtype: "<f4", shape: [2, 3], data: logprobs },
            sampledTokenRanks: { dtype: "<i8", shape: [2], data: ranks },
            cuNumGeneratedTokens: null,
          },
        },
        { requestId: "pool", newTokenIds: [], poolingOutput: { dtype: "<f4", shape: [100], data: pooled } },
      ],
    });
    const event = await w.waitForEvent(
      (e): e is Extract<WorkerEvent, { kind: "outputs" }> => isOutputs(e) && e.outputs.outputs.length === 2,
    );
    expect(event.frameCount).toBe(2);
    const [sampled, pooling] = (event.outputs as EngineCoreOutputs).outputs;
    const lp = sampled!.newLogprobs!;
    expect(lp.logprobTokenIds.shape).toEqual([2, 3]);
    expect(values(lp.logprobTokenIds)).toEqual([...ids]);
    expect(values(lp.logprobs)).toEqual([...logprobs]);
    expect(values(lp.sampledTokenRanks)).toEqual([...ranks]);
    expect(values(pooling!.poolingOutput!)).toEqual([...pooled]);
  });
});
