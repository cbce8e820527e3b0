// SseWriter frames each event for chunked encoding itself and writes it to the socket in one piece: the
// bytes on the wire must be valid chunked encoding (chunk sizes in UTF-8 bytes, not UTF-16 units), one chunk
// per event, and decode to the same body `ServerResponse.write` sends, with the terminating chunk after.
import { createServer, type Server, type ServerResponse } from "node:http";
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { SseWriter } from "../src/sse.js";

const events = ['{"text":"plain"}', '{"text":"é😀 \\u0000 \\"q\\""}', '{"text":"\u2028 日本語"}'];

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** The raw bytes of one response, served by `handle`, read over a raw TCP connection until it ends. */
async function rawResponse(handle: (res: ServerResponse) => Promise<void>): Promise<string> {
  server = createServer((_req, res) => void handle(res));
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  const socket = connect({ host: "127.0.0.1", port });
  socket.write(`GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`);
  const chunks: Buffer[] = [];
  socket.on("data", (c: Buffer) => chunks.push(c));
  await new Promise<void>((resolve) => socket.on("close", () => resolve()));
  const all = Buffer.concat(chunks).toString("utf8");
  // Headers differ by the Date line only; the body is what is compared.
  return all.slice(all.indexOf("\r\n\r\n") + 4);
}

/** Splits a chunked body into its chunk payloads, checking each size line against the payload's UTF-8 bytes. */
function dechunk(body: string): string[] {
  const bytes = Buffer.from(body, "utf8");
  const out: string[] = [];
  let at = 0;
  for (;;) {
    const eol = bytes.indexOf("\r\n", at);
    if (eol < 0) throw new Error(`no chunk size line at byte ${at}`);
    const size = Number.parseInt(bytes.subarray(at, eol).toString("latin1"), 16);
    if (!Number.isFinite(size)) throw new Error(`bad chunk size line at byte ${at}`);
    if (size === 0) {
      expect(bytes.subarray(eol).toString("latin1")).toBe("\r\n\r\n");
      return out;
    }
    out.push(bytes.subarray(eol + 2, eol + 2 + size).toString("utf8"));
    expect(bytes.subarray(eol + 2 + size, eol + 4 + size).toString("latin1")).toBe("\r\n");
    at = eol + 4 + size;
  }
}

describe("SseWriter", () => {
  it("writes the same chunked bytes as ServerResponse.write, non-ASCII sizes counted in UTF-8 bytes", async () => {
    const direct = await rawResponse(async (res) => {
      const sse = new SseWriter(res);
      sse.open();
      for (const e of events) expect(await sse.sendJson(e)).toBe(true);
      await sse.done();
    });
    const generic = await rawResponse(async (res) => {
      res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8" });
      res.flushHeaders();
      for (const e of events) res.write(`data: ${e}\n\n`);
      res.write("data: [DONE]\n\n");
      res.end();
    });
    // Node may coalesce same-tick writes into one chunk (Node 24 does), so the chunk boundaries of the
    // generic path are not a contract; the decoded body is. SseWriter's own framing is checked exactly.
    const directChunks = dechunk(direct);
    const expected = [...events.map((e) => `data: ${e}\n\n`), "data: [DONE]\n\n"];
    expect(directChunks).toEqual(expected);
    expect(dechunk(generic).join("")).toBe(expected.join(""));
    const second = `data: ${events[1]}\n\n`;
    expect(direct).toContain(`${Buffer.byteLength(second).toString(16)}\r\n${second}\r\n`);
    expect(Buffer.byteLength(second)).not.toBe(second.length);
    expect(direct.endsWith("0\r\n\r\n")).toBe(true);
  });
});
