// Test stand-in for the runtime worker: owns one transport at a time and drives it on command.
import { type MessagePort, parentPort } from "node:worker_threads";
import { resolveConfig } from "@vllm-engine-core/config";
import { serializeError } from "@vllm-engine-core/errors";
import { decodeOutputMessage } from "@vllm-engine-core/protocol";
import { connectTransport, type EngineTransport } from "../../src/index.ts";
import type { ConnectResult, WorkerCommand, WorkerMessage } from "./protocol.ts";

if (parentPort === null) throw new Error("transport-worker must run as a worker thread");
const port: MessagePort = parentPort;

/** Abort reasons the test can recognise after they crossed back. */
class TestAbortReason extends Error {
  override readonly name = "TestAbortReason";
}

let transport: EngineTransport | undefined;
let controller: AbortController | undefined;

const post = (message: WorkerMessage) => port.postMessage(message);

async function handle(command: WorkerCommand): Promise<unknown> {
  switch (command.op) {
    case "connect": {
      controller = new AbortController();
      if (command.preAborted) controller.abort(new TestAbortReason("aborted before connect"));
      // As on the runtime: the one schema resolves the config first (here on the same thread, so that an
      // invalid one rejects the connect like before), the transport takes the resolved form.
      const config = resolveConfig({
        transport: {
          ...command.config,
          ...(command.heartbeat === undefined ? {} : { heartbeat: command.heartbeat }),
          ...(command.sentinelAttributionWindowMs === undefined
            ? {}
            : { sentinelAttributionWindowMs: command.sentinelAttributionWindowMs }),
        },
        ...(command.clientIndex === undefined ? {} : { clientIndex: command.clientIndex }),
        ...(command.coordinator === undefined ? {} : { coordinator: command.coordinator }),
      });
      const pending = connectTransport(config, { signal: controller.signal });
      if (command.abortSynchronously) controller.abort(new TestAbortReason("aborted during bind"));
      transport = await pending;
      const result: ConnectResult = {
        inputAddress: transport.inputAddress,
        outputAddress: transport.outputAddress,
        engines: [...transport.engines],
      };
      return result;
    }
    case "abort":
      controller?.abort(new TestAbortReason(command.reason));
      return undefined;
    case "start-output":
      required().startOutputLoop({
        // The transport hands over undecoded frames; the test decodes them where it consumes them.
        onOutputs: (_route, frames, senders) => {
          let message: ReturnType<typeof decodeOutputMessage>;
          try {
            message = decodeOutputMessage(frames);
          } catch (error) {
            const bad = { error: serializeError(error as Error), frameCount: frames.length };
            post({ type: "event", kind: "bad", ...bad, senders: [...senders] });
            return;
          }
          if (message.kind === "outputs")
            post({ type: "event", kind: "outputs", outputs: message.outputs, frameCount: frames.length });
        },
        onEngineDead: (engineIndex, reason) =>
          post({ type: "event", kind: "dead", engineIndex, reason, at: Date.now() }),
        onBadMessage: (error, frames, senders) =>
          post({
            type: "event",
            kind: "bad",
            error: serializeError(error),
            frameCount: frames.length,
            senders: [...senders],
          }),
      });
      return undefined;
    case "send":
      await required().send(command.engineIndex, command.frames);
      return undefined;
    case "close": {
      const current = transport;
      transport = undefined;
      await current?.close();
      return undefined;
    }
    case "resources":
      // Everything this thread still holds besides the MessagePort to the test.
      return process.getActiveResourcesInfo().filter((r) => r !== "MessagePort");
    case "coordinator-state":
      return required().coordinator?.state() ?? null;
    case "coordinator-notify":
      await required().coordinator?.notifyRequest(command.engineIndex);
      return undefined;
    case "exit":
      await transport?.close();
      transport = undefined;
      // End by itself (never worker.terminate(): it can abort the process once zeromq is loaded).
      setImmediate(() => port.close());
      return undefined;
  }
}

function required(): EngineTransport {
  if (transport === undefined) throw new Error("no connected transport in this worker");
  return transport;
}

port.on("message", (message: { id: number; command: WorkerCommand }) => {
  handle(message.command).then(
    (value) => post({ type: "reply", id: message.id, ok: true, value }),
    (error: unknown) => post({ type: "reply", id: message.id, ok: false, error: serializeError(error) }),
  );
});
