// SocketSet (runs on this test thread; it needs no runtime marker): releasing endpoints for real, and doing
// so without ever stalling libzmq's I/O thread through a half-closed socket monitor.

import { existsSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import * as zmq from "zeromq";
import { enableDisconnectNotify } from "../src/liveness.ts";
import { SocketSet } from "../src/sockets.ts";
import { freeTcpAddress, ipcDir } from "./helpers/addresses.ts";

const ipc = ipcDir();
afterAll(() => ipc.remove());

/**
 * Closing a socket is finished by libzmq's reaper thread (it tears the connections down). True when a closed
 * DEALER's connection is seen going away (ROUTER_NOTIFY disconnect) within `ms`, i.e. the reaper is alive.
 */
async function closeIsReapedWithin(ms: number): Promise<boolean> {
  const router = new zmq.Router({ linger: 0 });
  enableDisconnectNotify(router);
  const dealer = new zmq.Dealer({ linger: 0 });
  let timer: NodeJS.Timeout | undefined;
  try {
    await router.bind("tcp://127.0.0.1:0");
    dealer.connect(router.lastEndpoint!);
    await dealer.send("hello");
    await router.receive();
    dealer.close();
    const notified = router.receive().then((frames) => frames[1]!.length === 0);
    return await Promise.race([
      notified,
      new Promise<boolean>((resolve) => (timer = setTimeout(resolve, ms, false))),
    ]);
  } finally {
    clearTimeout(timer);
    router.close();
  }
}

describe("SocketSet", () => {
  it("frees tcp and ipc endpoints (with peers connected) for an immediate re-bind, round after round", async () => {
    const addresses = [await freeTcpAddress(), ipc.address("rebind")];
    for (let round = 0; round < 40; round++) {
      const sockets = new SocketSet();
      const peers: zmq.Dealer[] = [];
      for (const address of addresses) {
        const router = sockets.add(new zmq.Router({ linger: 0 }));
        await sockets.bind(router, address, "input");
        const peer = new zmq.Dealer({ linger: 0 });
        peer.connect(address); // keeps reconnecting after the close: new accepts on the next round's bind
        await peer.send("hello");
        await router.receive();
        peers.push(peer);
      }
      await sockets.closeAll();
      const again = new SocketSet();
      for (const address of addresses)
        await again.bind(again.add(new zmq.Router({ linger: 0 })), address, "input");
      await again.closeAll();
      for (const peer of peers) peer.close();
    }
    // Had a socket monitor lost its reader before its socket was closed, libzmq's blocking monitor send would
    // have hung the reaper (or an I/O thread) by now, and no later close would ever be carried out.
    expect(await closeIsReapedWithin(2000)).toBe(true);
  });

  it("reports the endpoint read back for :0 and closes idempotently", async () => {
    const sockets = new SocketSet();
    const router = sockets.add(new zmq.Router({ linger: 0 }));
    const endpoint = await sockets.bind(router, "tcp://127.0.0.1:0", "input");
    expect(endpoint).toMatch(/^tcp:\/\/127\.0\.0\.1:[1-9]\d*$/);
    await Promise.all([sockets.closeAll(), sockets.closeAll(), sockets.release(router)]);
    expect(router.closed).toBe(true);
  });

  it("removes the ipc socket files it bound (libzmq alone leaves them behind)", async () => {
    const bare = new zmq.Pull({ linger: 0 });
    const barePath = ipc.address("bare").slice("ipc://".length);
    await bare.bind(`ipc://${barePath}`);
    bare.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(existsSync(barePath)).toBe(true); // control: what the cleanup is for

    const sockets = new SocketSet();
    const early = sockets.add(new zmq.Router({ linger: 0 }));
    const late = sockets.add(new zmq.Pull({ linger: 0 }));
    const paths = [ipc.address("early"), ipc.address("late")];
    await sockets.bind(early, paths[0]!, "handshake");
    await sockets.bind(late, paths[1]!, "output");
    const files = paths.map((p) => p.slice("ipc://".length));
    expect(files.every((f) => existsSync(f))).toBe(true);
    await sockets.release(early);
    expect(existsSync(files[0]!)).toBe(false);
    expect(existsSync(files[1]!)).toBe(true);
    await sockets.closeAll();
    expect(existsSync(files[1]!)).toBe(false);
  });

  it("leaves an ipc socket file alone once another socket has bound the same path", async () => {
    const path = ipc.address("taken-over");
    const sockets = new SocketSet();
    await sockets.bind(sockets.add(new zmq.Pull({ linger: 0 })), path, "output");
    const intruder = new zmq.Pull({ linger: 0 });
    await intruder.bind(path); // libzmq replaces the file: a new socket file at the same path
    await sockets.closeAll();
    expect(existsSync(path.slice("ipc://".length))).toBe(true);
    intruder.close();
  });

  it("turns a failed bind into a BindError naming the socket role", async () => {
    const sockets = new SocketSet();
    const socket = sockets.add(new zmq.Pull({ linger: 0 }));
    await expect(sockets.bind(socket, "tcp://203.0.113.7:5555", "output")).rejects.toMatchObject({
      name: "BindError",
      socket: "output",
      address: "tcp://203.0.113.7:5555",
    });
    await sockets.closeAll();
    expect(socket.closed).toBe(true);
  });
});
