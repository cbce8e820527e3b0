// Recorded engine output: K consecutive EngineCoreOutputs messages (raw frames, as the mock engine sent
// them) that each carry one output for every one of N running streams. Stored length-prefixed.
import { readFileSync, writeFileSync } from "node:fs";

export function writeRecording(path: string, messages: readonly (readonly Uint8Array[])[]): void {
  const parts: Buffer[] = [];
  const u32 = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(n);
    return b;
  };
  parts.push(u32(messages.length));
  for (const frames of messages) {
    parts.push(u32(frames.length));
    for (const f of frames) parts.push(u32(f.byteLength), Buffer.from(f.buffer, f.byteOffset, f.byteLength));
  }
  writeFileSync(path, Buffer.concat(parts));
}

export function readRecording(path: string): Buffer[][] {
  const data = readFileSync(path);
  let at = 0;
  const u32 = () => {
    const n = data.readUInt32LE(at);
    at += 4;
    return n;
  };
  const messages: Buffer[][] = [];
  for (let m = u32(); m > 0; m--) {
    const frames: Buffer[] = [];
    for (let f = u32(); f > 0; f--) {
      const len = u32();
      frames.push(data.subarray(at, at + len));
      at += len;
    }
    messages.push(frames);
  }
  return messages;
}
