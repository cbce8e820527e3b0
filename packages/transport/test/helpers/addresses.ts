import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A private directory for ipc:// endpoints of one test file; remove() at the end. */
export function ipcDir(): { address(name: string): string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "vllm-transport-test-"));
  let n = 0;
  return {
    address: (name) => `ipc://${join(dir, `${name}-${n++}.sock`)}`,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A currently free loopback TCP port (the OS picks it; tests bind it right away). */
export async function freeTcpAddress(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no tcp port");
  return `tcp://127.0.0.1:${address.port}`;
}
