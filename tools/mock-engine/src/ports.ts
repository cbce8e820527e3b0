// TCP ports for tests that bind fixed addresses, free them and bind them again. A port the kernel handed out
// for `listen(0)` lies in the ephemeral range, which the kernel also draws every outgoing connection's source
// port from: once the test frees it, any connection on the machine (another test's, another CI job's) may take
// it and the re-bind fails with EADDRINUSE. Ports below that range are never picked by the kernel, so a port
// found free there stays free until someone binds it by number.
import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/** The lowest ephemeral port (Linux's ip_local_port_range; IANA's 49152 where that file is missing). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 1024) return low;
  } catch {
    // not Linux
  }
  return 49_152;
}

/** Whether `port` can be bound on 127.0.0.1 right now (bound and released at once). */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen({ port, host: "127.0.0.1", exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * `count` distinct ports below the ephemeral range, each bindable on 127.0.0.1 when returned. Drawn at random
 * from [10000, low) so that tests running at the same time rarely try the same one; taken ones are skipped.
 */
export async function reservedTcpPorts(count: number): Promise<number[]> {
  const low = ephemeralLow();
  const floor = Math.min(10_000, low - 1_000);
  const ports: number[] = [];
  for (let attempt = 0; ports.length < count; attempt++) {
    if (attempt > 1_000) throw new Error(`no ${count} bindable ports below ${low}`);
    const port = floor + Math.floor(Math.random() * (low - floor));
    if (!ports.includes(port) && (await bindable(port))) ports.push(port);
  }
  return ports;
}
