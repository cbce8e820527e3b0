#!/usr/bin/env node
// The server scenario's HTTP load generator, a child process of the scenario (forked with IPC): opens N
// streaming chat completions over real sockets (one TCP connection each, HTTP/1.1 written by hand), reads their SSE events
// and, while recording, notes per event the cumulative `usage.completion_tokens` (the request asks for
// `continuous_usage_stats`) and the time (CLOCK_MONOTONIC, the engine stamps' clock) at which its bytes
// arrived. It parses no more JSON than that: the load generator must stay cheap next to the server it
// measures.
import { Agent, request } from "node:http";
import { connect } from "node:net";
import { monotonicNowMs } from "@vllm-engine-core/probe/clock";
import type { FromLoad, StreamRecord, ToLoad } from "./load-protocol.js";

const send = (m: FromLoad) => process.send?.(m);
if (process.send === undefined) throw new Error("load-generator.js must be forked with an IPC channel");

const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
const USAGE_KEY = '"completion_tokens":';
const ID_KEY = '"id":"';

interface Stream {
  record: StreamRecord;
  lastCount: number;
  destroy(): void;
}

const streams: Stream[] = [];
let recording = false;
let closing = false;
let recordStart = 0;

function fail(message: string): void {
  send({ type: "failed", message });
}

/**
 * Reads one streaming response over a raw TCP connection: the request is written by hand and the response
 * is searched as bytes (SSE events are `\n\n`-terminated; the chunked framing between them never holds
 * the keys searched for), so each event costs a few string searches instead of Node's HTTP client machinery.
 * The arrival time of an event is when its bytes came off the socket.
 */
function openStream(url: string, body: string, onFirst: () => void): Stream {
  const stream: Stream = { record: { id: "", counts: [], arrivals: [] }, lastCount: 0, destroy: () => {} };
  const { hostname, port, pathname } = new URL(url);
  const socket = connect({ host: hostname, port: Number(port), noDelay: true });
  stream.destroy = () => socket.destroy();
  let pending = "";
  let flowing = false;
  let headersSeen = false;
  socket.on("error", (error) => {
    if (!closing) fail(`stream connection failed: ${error.message}`);
  });
  socket.write(
    `POST ${pathname} HTTP/1.1\r\nhost: ${hostname}:${port}\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  socket.on("data", (chunk: Buffer) => {
    const at = monotonicNowMs();
    pending += chunk.toString("latin1");
    if (!headersSeen) {
      const h = pending.indexOf("\r\n\r\n");
      if (h === -1) return;
      const status = pending.slice(9, 12);
      if (status !== "200") {
        fail(`stream answered ${status}: ${pending.slice(0, 300)}`);
        socket.destroy();
        return;
      }
      headersSeen = true;
      pending = pending.slice(h + 4);
    }
    let end = pending.indexOf("\n\n");
    while (end !== -1) {
      const k = pending.lastIndexOf(USAGE_KEY, end);
      if (k !== -1) {
        const count = Number.parseInt(pending.slice(k + USAGE_KEY.length, k + USAGE_KEY.length + 12), 10);
        if (stream.record.id === "") {
          const i = pending.indexOf(ID_KEY);
          stream.record.id = pending.slice(i + ID_KEY.length, pending.indexOf('"', i + ID_KEY.length));
        }
        stream.lastCount = count;
        if (recording) {
          stream.record.counts.push(count);
          stream.record.arrivals.push(at);
        }
        if (!flowing) {
          flowing = true;
          onFirst();
        }
      }
      pending = pending.slice(end + 2);
      end = pending.indexOf("\n\n");
    }
  });
  return stream;
}

function oneRequest(url: string, body: string): void {
  const startedAt = monotonicNowMs();
  const req = request(url, {
    method: "POST",
    agent,
    headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
  });
  req.on("error", (error) => fail(`request failed: ${error.message}`));
  req.on("response", (res) => {
    const chunks: Buffer[] = [];
    res.on("data", (c: Buffer) => chunks.push(c));
    res.on("end", () => {
      const all = Buffer.concat(chunks);
      send({
        type: "response",
        status: res.statusCode ?? 0,
        bytes: all.length,
        startedAt,
        endedAt: monotonicNowMs(),
        body: all.subarray(0, 2000).toString("utf8"),
      });
    });
  });
  req.end(body);
}

process.on("message", (m: ToLoad) => {
  switch (m.type) {
    case "open": {
      let flowing = 0;
      for (let i = 0; i < m.streams; i++) {
        streams.push(
          openStream(m.url, m.body.replaceAll("{i}", String(i)), () => {
            if (++flowing === m.streams) send({ type: "flowing", streams: m.streams });
          }),
        );
      }
      break;
    }
    case "record-start":
      for (const s of streams) s.record = { id: s.record.id, counts: [], arrivals: [] };
      recording = true;
      recordStart = monotonicNowMs();
      // Each stream's count before the window: its first event in the window counts from there.
      for (const s of streams) {
        s.record.counts.push(s.lastCount);
        s.record.arrivals.push(recordStart);
      }
      break;
    case "record-stop": {
      recording = false;
      const windowMs = monotonicNowMs() - recordStart;
      let tokens = 0;
      let events = 0;
      for (const s of streams) {
        const c = s.record.counts;
        tokens += c[c.length - 1]! - c[0]!;
        events += c.length - 1;
      }
      send({ type: "records", windowMs, tokens, events, streams: streams.map((s) => s.record) });
      break;
    }
    case "request":
      oneRequest(m.url, m.body);
      break;
    case "close":
      closing = true;
      for (const s of streams) s.destroy();
      agent.destroy();
      process.disconnect();
      break;
  }
});
