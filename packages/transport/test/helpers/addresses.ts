import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { reservedTcpPorts } from "@vllm-engine-core/mock-engine";

/** A private directory for ipc:// endpoints of one test file; remove() at the end. */
export function ipcDir(): { address(name: string): string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "vllm-transport-test-"));
  let n = 0;
  return {
    address: (name) => `ipc://${join(dir, `${name}-${n++}.sock`)}`,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export async function freeTcpAddress(): Promise<string> {
  const [port] = await reservedTcpPorts(1);
  return `tcp://127.0.0.1:${port}`;
}
