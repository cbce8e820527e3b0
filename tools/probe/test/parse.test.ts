import { describe, expect, it } from "vitest";
import {
  classifyFdTarget,
  epollFdOfTask,
  parseEpollFdinfo,
  parseProcNetTcp,
  parseTaskSyscall,
} from "../src/procfs/parse.js";

// Recorded from Linux 6.18 (a Node 20 main-thread loop watching one zeromq.js socket).
const NODE_LOOP_FDINFO = `pos:\t0
flags:\t02000002
mnt_id:\t17
ino:\t26
tfd:       23 events:       19 data:               17  pos:0 ino:1a sdev:10
tfd:       15 events:       19 data:                f  pos:0 ino:4ace sdev:f
tfd:       17 events:       19 data:               11  pos:0 ino:1a sdev:10
`;

// libzmq's I/O thread: pointers as data.
const LIBZMQ_FDINFO = `pos:\t0
flags:\t02000002
mnt_id:\t17
ino:\t26
tfd:       26 events:       19 data:     7f55d8001540  pos:0 ino:4ad3 sdev:9
tfd:       21 events:       19 data:         23c603e0  pos:0 ino:1a sdev:10
`;

// Older kernels print no pos/ino/sdev and a 16-digit data field.
const OLD_KERNEL_FDINFO = `pos:\t0
flags:\t02
mnt_id:\t11
tfd:        5 events:       1d data: ffffffff00000005
`;

describe("parseEpollFdinfo", () => {
  it("reads every tfd line with hex events and data", () => {
    expect(parseEpollFdinfo(NODE_LOOP_FDINFO)).toEqual([
      { tfd: 23, events: 0x19, data: 0x17n },
      { tfd: 15, events: 0x19, data: 0xfn },
      { tfd: 17, events: 0x19, data: 0x11n },
    ]);
  });

  it("keeps pointer-sized data exactly (bigint)", () => {
    expect(parseEpollFdinfo(LIBZMQ_FDINFO)).toEqual([
      { tfd: 26, events: 0x19, data: 0x7f55d8001540n },
      { tfd: 21, events: 0x19, data: 0x23c603e0n },
    ]);
    expect(parseEpollFdinfo(OLD_KERNEL_FDINFO)).toEqual([
      { tfd: 5, events: 0x1d, data: 0xffffffff00000005n },
    ]);
  });

  it("returns nothing for an empty epoll or a non-epoll fdinfo", () => {
    expect(parseEpollFdinfo("pos:\t0\nflags:\t02000002\nmnt_id:\t17\nino:\t26\n")).toEqual([]);
    expect(parseEpollFdinfo("pos:\t0\nflags:\t02004002\neventfd-count:                0\n")).toEqual([]);
  });
});

describe("classifyFdTarget", () => {
  it("recognises epoll, eventfd, socket and pipe links", () => {
    expect(classifyFdTarget("anon_inode:[eventpoll]")).toEqual({ kind: "epoll" });
    expect(classifyFdTarget("anon_inode:[eventfd]")).toEqual({ kind: "eventfd" });
    expect(classifyFdTarget("socket:[19969]")).toEqual({ kind: "socket", inode: 19969 });
    expect(classifyFdTarget("pipe:[19150]")).toEqual({ kind: "pipe", inode: 19150 });
    expect(classifyFdTarget("/dev/null")).toEqual({ kind: "other", target: "/dev/null" });
  });
});

describe("parseTaskSyscall / epollFdOfTask", () => {
  it("finds the epoll fd of a thread blocked in epoll_wait / epoll_pwait (x64)", () => {
    const wait = parseTaskSyscall(
      "232 0x16 0x7f55edffa0e0 0x100 0xffffffff 0x0 0x0 0x7f55edff9f98 0x7f55f0c2f0e6\n",
    );
    expect(wait).toEqual({
      state: "in-syscall",
      nr: 232,
      args: [0x16n, 0x7f55edffa0e0n, 0x100n, 0xffffffffn, 0n, 0n],
    });
    expect(epollFdOfTask(wait, "x64")).toBe(22);
    const pwait = parseTaskSyscall("281 0x1c 0x7f55ed7f6790 0x400 0xffffffff 0x0 0x8 0x7f 0x7f");
    expect(epollFdOfTask(pwait, "x64")).toBe(28);
  });

  it("returns undefined for other syscalls, running threads and unknown architectures", () => {
    expect(
      epollFdOfTask(parseTaskSyscall("202 0x23b94634 0x189 0x0 0x0 0x0 0x0 0x1 0x2"), "x64"),
    ).toBeUndefined();
    expect(parseTaskSyscall("running\n")).toEqual({ state: "running" });
    expect(epollFdOfTask(parseTaskSyscall("running"), "x64")).toBeUndefined();
    expect(parseTaskSyscall("-1 0x7ffd 0x7f")).toEqual({ state: "not-in-syscall" });
    expect(epollFdOfTask(parseTaskSyscall("232 0x16 0 0 0 0 0 0 0"), "riscv64")).toBeUndefined();
    expect(epollFdOfTask(parseTaskSyscall("22 0x9 0 0 0 0 0 0 0"), "arm64")).toBe(9);
  });
});

describe("parseProcNetTcp", () => {
  it("decodes IPv4 addresses, ports, states and inodes", () => {
    const text = [
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
      "   0: 0100007F:A3F1 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 24512 1 0000000000000000 100 0 0 10 0",
      "   1: 0100007F:A3F1 0100007F:D2C4 01 00000000:00000000 00:00000000 00000000     0        0 24530 1 0000000000000000 20 4 30 10 -1",
      "   2: 0100007F:B5E7 0100007F:C6C2 06 00000000:00000000 03:0000036D 00000000     0        0 0 3 0000000040f7b09f",
    ].join("\n");
    expect(parseProcNetTcp(text)).toEqual([
      {
        localAddress: "127.0.0.1",
        localPort: 0xa3f1,
        remoteAddress: "0.0.0.0",
        remotePort: 0,
        state: "LISTEN",
        inode: 24512,
      },
      {
        localAddress: "127.0.0.1",
        localPort: 0xa3f1,
        remoteAddress: "127.0.0.1",
        remotePort: 0xd2c4,
        state: "ESTABLISHED",
        inode: 24530,
      },
      {
        localAddress: "127.0.0.1",
        localPort: 0xb5e7,
        remoteAddress: "127.0.0.1",
        remotePort: 0xc6c2,
        state: "TIME_WAIT",
        inode: 0,
      },
    ]);
  });

  it("decodes IPv6 loopback", () => {
    const text = [
      "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
      "   0: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 777 1 0000000000000000 100 0 0 10 0",
    ].join("\n");
    const [entry] = parseProcNetTcp(text);
    expect(entry).toMatchObject({ localPort: 8080, state: "LISTEN", inode: 777 });
    expect(entry!.localAddress).toBe("0:0:0:0:0:0:0:1");
  });
});
