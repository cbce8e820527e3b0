"""Baseline: a Python frontend loop shaped like vLLM's AsyncMPClient + AsyncLLM output path.

One asyncio event loop (zmq.asyncio) does what vLLM's Python frontend does per engine step:
  process_outputs_socket: recv_multipart(copy=False) -> msgpack decode -> outputs_queue.put_nowait
  output_handler:         outputs_queue.get() -> per request: collector.put(output)   (RequestOutputCollector)
  per-request consumer:   await collector.get() -> count tokens
Decoding uses python3-msgpack (Debian) into plain lists instead of vLLM's msgspec structs; no detokenization.

Input (stdin, JSON): handshakeAddress, requests [[hex frame, ...], ...] (pre-encoded ADD frames without the
identity), warmupS, measureS, creditFile (replay engine flow control, or null). Output: lines "window-start" / "window-end" when the measurement
window opens / closes, then one JSON line with the result.
Requires /usr/bin/python3 with python3-zmq and python3-msgpack; exits 3 when they are missing (printing
{"skipped": ...} before reading stdin). `--check` only imports them: {"ok": true} and exit 0, or the same
skip; the bench runs it first, so that it never writes a config to a child that is about to exit.
"""

import asyncio
import json
import os
import resource
import struct
import sys
import time

try:
    import msgpack
    import zmq
    import zmq.asyncio
except ImportError as error:  # the bench reports the baseline as skipped
    print(json.dumps({"skipped": f"missing module: {error.name}"}), flush=True)
    sys.exit(3)

ENGINE_CORE_DEAD = b"ENGINE_CORE_DEAD"
CHUNK_SIZE = 128  # vLLM's VLLM_V1_OUTPUT_PROC_CHUNK_SIZE default
QUEUE_BOUND = 64  # messages; above the replay engine's credit window (48)
FLOWING_TIMEOUT_S = 30
MEMORY_LIMIT_BYTES = 4 << 30  # a runaway queue must fail here, not swap the machine


async def exit_with_parent():
    """The bench may be killed; never outlive it."""
    parent = os.getppid()
    while os.getppid() == parent:
        await asyncio.sleep(0.5)
    os._exit(5)


class RequestOutputCollector:
    """vLLM's per-request collector: one pending slot, merged while nobody reads, and an event."""

    __slots__ = ("output", "ready")

    def __init__(self):
        self.output = None
        self.ready = asyncio.Event()

    def put(self, output):
        if self.output is None:
            self.output = output
            self.ready.set()
        else:
            # vLLM merges deltas of a slow reader into the pending output
            self.output[1].extend(output[1])
            if output[5] is not None:
                self.output[5] = output[5]

    async def get(self):
        while self.output is None:
            await self.ready.wait()
        output = self.output
        self.output = None
        self.ready.clear()
        return output


async def handshake(ctx, address, host="127.0.0.1"):
    inp = ctx.socket(zmq.ROUTER)
    out = ctx.socket(zmq.PULL)
    hs = ctx.socket(zmq.ROUTER)
    for s in (inp, out, hs):
        s.setsockopt(zmq.LINGER, 0)
    inp.setsockopt(zmq.SNDHWM, 0)
    inp.setsockopt(zmq.RCVHWM, 0)
    out.setsockopt(zmq.RCVHWM, 0)
    inp.bind(f"tcp://{host}:0")
    out.bind(f"tcp://{host}:0")
    hs.bind(address)
    in_addr = inp.getsockopt(zmq.LAST_ENDPOINT).decode()
    out_addr = out.getsockopt(zmq.LAST_ENDPOINT).decode()
    init = msgpack.packb(
        {
            "addresses": {
                "inputs": [in_addr],
                "outputs": [out_addr],
                "coordinator_input": None,
                "coordinator_output": None,
                "frontend_stats_publish_address": None,
            },
            "parallel_config": {},
        }
    )
    identity, payload = await hs.recv_multipart()
    if msgpack.unpackb(payload)["status"] != "HELLO":
        raise RuntimeError("expected HELLO")
    await hs.send_multipart([identity, init])
    identity, payload = await hs.recv_multipart()
    if msgpack.unpackb(payload)["status"] != "READY":
        raise RuntimeError("expected READY")
    hs.close()
    identity, _registration = await inp.recv_multipart()
    return inp, out, identity


async def main():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))
    config = json.loads(sys.stdin.read())
    watchdog = asyncio.create_task(exit_with_parent())
    ctx = zmq.asyncio.Context()
    inp, out, identity = await handshake(ctx, config["handshakeAddress"])
    collectors = {}
    outputs_queue = asyncio.Queue(maxsize=QUEUE_BOUND)
    state = {"counting": False, "tokens": 0, "outputs": 0, "merged": 0, "started": 0}
    all_flowing = asyncio.Event()
    stop = asyncio.Event()

    async def process_outputs_socket():
        while True:
            frames = await out.recv_multipart(copy=False)
            if len(frames) == 1 and frames[0].bytes == ENGINE_CORE_DEAD:
                raise RuntimeError("engine died")
            outputs = msgpack.unpackb(frames[0].buffer, raw=False, use_list=True)
            # vLLM does outputs_queue.put_nowait() on an unbounded queue. Awaiting recv_multipart() does not
            # suspend while messages are queued, so against an engine that never pauses (the mock at full
            # load) that task would starve every other task and grow the queue without bound. The queue is
            # therefore bounded at QUEUE_BOUND messages; the replay engine keeps fewer in flight, so there
            # this is exactly vLLM's loop.
            await outputs_queue.put(outputs)

    async def output_handler():
        while True:
            outputs = await outputs_queue.get()
            batch = outputs[1]
            # Like AsyncLLM.output_handler: chunks of VLLM_V1_OUTPUT_PROC_CHUNK_SIZE, yielding in between.
            for start in range(0, len(batch), CHUNK_SIZE):
                for output in batch[start : start + CHUNK_SIZE]:
                    collector = collectors.get(output[0])
                    if collector is not None:
                        collector.put(output)
                if start + CHUNK_SIZE < len(batch):
                    await asyncio.sleep(0)

    credit_fd = os.open(config["creditFile"], os.O_WRONLY) if config.get("creditFile") else None
    credit = {"delivered": 0, "written": 0}
    publish_every = 4 * len(config["requests"])  # CREDIT_STEPS engine steps' worth, like the Node consumers

    def publish(tokens):
        # replay engine flow control: delivered token count as a float64 at offset 0 (see credit.ts)
        credit["delivered"] += tokens
        if credit["delivered"] - credit["written"] >= publish_every:
            credit["written"] = credit["delivered"]
            os.pwrite(credit_fd, struct.pack("<d", credit["delivered"]), 0)

    async def consume(request_id):
        collector = collectors[request_id]
        first = True
        while not stop.is_set():
            output = await collector.get()
            if first:
                first = False
                state["started"] += 1
                if state["started"] == len(collectors):
                    all_flowing.set()
            if credit_fd is not None:
                publish(len(output[1]))
            if state["counting"]:
                n = len(output[1])
                state["tokens"] += n
                state["outputs"] += 1
                if n > 1:
                    state["merged"] += 1
            if output[5] is not None:
                return

    tasks = [asyncio.create_task(process_outputs_socket()), asyncio.create_task(output_handler())]
    ids = []
    for frames in config["requests"]:
        raw = [bytes.fromhex(f) for f in frames]
        request_id = msgpack.unpackb(raw[1], raw=False)[0]
        ids.append(request_id)
        collectors[request_id] = RequestOutputCollector()
        await inp.send_multipart([identity, *raw])
    consumers = [asyncio.create_task(consume(i)) for i in ids]
    try:
        await asyncio.wait_for(all_flowing.wait(), FLOWING_TIMEOUT_S)
    except asyncio.TimeoutError:
        print(f"not every stream delivered an output within {FLOWING_TIMEOUT_S} s", file=sys.stderr, flush=True)
        os._exit(4)
    await asyncio.sleep(config["warmupS"])
    print("window-start", flush=True)
    t0 = time.perf_counter()
    state["counting"] = True
    await asyncio.sleep(config["measureS"])
    state["counting"] = False
    t1 = time.perf_counter()
    print("window-end", flush=True)
    stop.set()
    await inp.send_multipart([identity, b"\x01", msgpack.packb(ids)])
    for t in tasks + consumers + [watchdog]:
        t.cancel()
    print(
        json.dumps(
            {
                "tokens": state["tokens"],
                "outputs": state["outputs"],
                "merged": state["merged"],
                "windowMs": (t1 - t0) * 1000,
                "python": sys.version.split()[0],
                "pyzmq": zmq.__version__,
                "msgpack": ".".join(map(str, msgpack.version)),
            }
        ),
        flush=True,
    )
    inp.close()
    out.close()
    ctx.term()


if __name__ == "__main__":
    if sys.argv[1:] == ["--check"]:
        print(json.dumps({"ok": True}), flush=True)
    else:
        asyncio.run(main())
