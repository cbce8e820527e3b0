// SseWriter frames each event for chunked encoding itself and writes it to the socket in one piece: the
// bytes on the wire must be exactly those `ServerResponse.write` sends (chunk sizes in UTF-8 bytes, not
// UTF-16 units), in order with the headers before and the terminating chunk after.
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
    expect(direct).toBe(generic);
    const second = `data: ${events[1]}\n\n`;
    expect(direct).toContain(`${Buffer.byteLength(second).toString(16)}\r\n${second}\r\n`);
    expect(Buffer.byteLength(second)).not.toBe(second.length);
    expect(direct.endsWith("0\r\n\r\n")).toBe(true);
  });
});
