// A TCP port free right now on the host, for the handshake address (the frontend binds it, the engine dials).
//
// Chosen below the kernel's ephemeral range: a port the kernel hands out (listen(0)) is in that range, and
// between the check and the frontend's bind any process's outgoing connection can take it (vLLM engines
// open several while they start: four engines starting at once made the bind fail with EADDRINUSE). Below
// the range nothing is assigned implicitly, so a port free at the check stays free unless someone binds it
// on purpose; ports handed out by this process are not handed out again.
import { readFileSync } from "node:fs";
import { createServer } from "node:net";

const FLOOR = 10_000;
const ATTEMPTS = 50;
const handedOut = new Set<number>();

/** The first port of the kernel's ephemeral range (Linux: /proc; elsewhere the IANA range's start). */
function ephemeralStart(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > FLOOR + 1000 ? low : 49_152;
  } catch {
    return 49_152;
  }
}

function isFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

export async function freePort(host = "127.0.0.1"): Promise<number> {
  const ceiling = ephemeralStart();
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const port = FLOOR + Math.floor(Math.random() * (ceiling - FLOOR));
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if (await isFree(port, host)) return port;
  }
  throw new Error(`no free TCP port on ${host} below ${ceiling} after ${ATTEMPTS} tries`);
}
