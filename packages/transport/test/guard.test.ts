import { resolveConfig } from "@vllm-engine-core/config";
import { TransportOutsideRuntimeError } from "@vllm-engine-core/errors";
import { afterAll, describe, expect, it } from "vitest";
import { RUNTIME_WORKER_MARKER, RUNTIME_WORKER_MARKER_VALUE } from "../src/guard.ts";
import { connectTransport } from "../src/index.ts";
import { freeTcpAddress, ipcDir } from "./helpers/addresses.ts";
import { useCleanups } from "./helpers/cleanup.ts";
import { assertBindable } from "./helpers/raw-engine.ts";
import { TransportWorker } from "./helpers/worker-harness.ts";

const ipc = ipcDir();
const defer = useCleanups();
afterAll(() => ipc.remove());

describe("the runtime-worker tripwire", () => {
  it("rejects on a thread that is not a worker (this test's thread)", async () => {
    const handshakeAddress = await freeTcpAddress();
    const error = await connectTransport(
      resolveConfig({ transport: { mode: "handshake-owner", handshakeAddress } }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportOutsideRuntimeError);
    expect(error).toMatchObject({ code: "TRANSPORT_OUTSIDE_RUNTIME" });
    await assertBindable([handshakeAddress]); // nothing was bound
  });

  for (const [what, workerData] of [
    ["with null workerData", null],
    ["without the marker", { other: 1 }],
    ["with another protocol version", { [RUNTIME_WORKER_MARKER]: RUNTIME_WORKER_MARKER_VALUE + 1 }],
  ] as const) {
    it(`rejects in a worker thread ${what}`, async () => {
      const w = new TransportWorker(workerData);
      defer(() => w.exit());
      await expect(
        w.connect({ config: { mode: "handshake-owner", handshakeAddress: ipc.address("hs") } }),
      ).rejects.toMatchObject({ name: "TransportOutsideRuntimeError", code: "TRANSPORT_OUTSIDE_RUNTIME" });
    });
  }
});
