// Child process of the floor measurement: PUSHes an 8-byte CLOCK_MONOTONIC stamp (clock.ts) every interval.
import * as zmq from "zeromq";
import { monotonicNowMs } from "./clock.js";

const [endpoint, intervalArg] = process.argv.slice(2);
if (!endpoint) throw new Error("usage: floor-sender <endpoint> <intervalMs>");
const push = new zmq.Push({ linger: 0 });
push.connect(endpoint);
const stamp = Buffer.alloc(8);
let sending = false;
const timer = setInterval(
  () => {
    if (sending) return; // one send in flight per socket
    sending = true;
    stamp.writeDoubleLE(monotonicNowMs());
    push.send(stamp).finally(() => {
      sending = false;
    });
  },
  Number(intervalArg ?? 5),
);
// The parent ends the measurement by disconnecting the IPC channel.
process.once("disconnect", () => {
  clearInterval(timer);
  push.close();
});
