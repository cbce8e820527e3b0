// The probe's consumer: a worker thread (neither the connecting thread nor the runtime) that attaches to
// the connection with EngineCoreClient.attach(handle), runs the streams and records each output's delay
// (receive time − the engine's send timestamp, both on CLOCK_MONOTONIC). It never loads zeromq.
import type { EngineCoreOutputStream } from "@vllm-engine-core/client";
import { monotonicNowMs } from "./clock.js";
import { serveConsumer } from "./consumer/serve.js";
import type { FromConsumer, ToConsumer } from "./consumer-protocol.js";
import { DelayRecorder } from "./delays.js";
import { callRequest, streamRequestIds } from "./requests.js";

let recorder = new DelayRecorder();
let ids: string[] = [];
let loops: Promise<void>[] = [];

async function consume(
  stream: EngineCoreOutputStream,
  tokensPerStep: number,
  onFirst: () => void,
): Promise<void> {
  for await (const output of stream) {
    const received = monotonicNowMs();
    if (output.finishReason != null) break;
    recorder.record(stream.lastTimestamp * 1000, received);
    if (output.newTokenIds.length > tokensPerStep) recorder.merged++;
    onFirst();
  }
}

await serveConsumer<ToConsumer, FromConsumer>(async (message, { client, post }) => {
  switch (message.type) {
    case "start": {
      recorder = new DelayRecorder();
      ids = streamRequestIds(message.prefix, message.count);
      let announced = false;
      const onFirst = () => {
        if (announced) return;
        announced = true;
        post({ type: "flowing" });
      };
      const streams: EngineCoreOutputStream[] = [];
      for (const id of ids) streams.push(await client.call(callRequest(id, message.maxTokens)));
      loops = streams.map((s) => consume(s, message.tokensPerStep, onFirst));
      return;
    }
    case "stop": {
      const done = recorder;
      recorder = new DelayRecorder(); // outputs after this point are not counted
      await client.abort(ids);
      await Promise.all(loops);
      const pairs = done.pairs();
      post({ type: "stopped", pairs, merged: done.merged }, [pairs.buffer as ArrayBuffer]);
      return;
    }
  }
});
