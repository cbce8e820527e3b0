import { encodeHandshakeInit } from "@vllm-engine-core/protocol";
import * as zmq from "zeromq";
import {
  type CoordinatorRuntime,
  ExternalCoordinator,
  InprocCoordinator,
  tcpAnyPort,
} from "./coordinator.js";
import { type OutputRoute, ZmqEngineTransport } from "./engine-transport.js";
import { InvalidTransportConfigError } from "./errors.js";
import { assertInsideRuntime } from "./guard.js";
import { runHandshake } from "./handshake.js";
import { identityHex } from "./identity.js";
import { enableDisconnectNotify, heartbeatSocketOptions } from "./liveness.js";
import { awaitRegistrations } from "./registration.js";
import { BASE_SOCKET_OPTIONS, SocketSet } from "./sockets.js";
import type {
  ConnectedEngine,
  ConnectOptions,
  EngineTransport,
  HeartbeatOptions,
  TransportConfig,
} from "./types.js";
import { abortable } from "./waits.js";

const DEFAULT_READY_TIMEOUT_MS = 30_000;

/**
 * Up to this many engines, each gets its own output socket (see step 1 below); beyond it they share one:
 * every socket costs file descriptors, and zeromq.js allows 1023 sockets per context.
 */
export const MAX_PER_ENGINE_OUTPUT_SOCKETS = 128;
const MAX_ENGINE_INDEX = 0xffff;

/**
 * Binds the frontend sockets, brings up `engineCount` engines (handshake-owner or bootstrapped) and returns the
 * connected transport. Runs only on the runtime worker thread. Aborting `options.signal` at any stage closes
 * every socket opened so far (their addresses are free again when the promise settles) and rejects with the
 * signal's reason; any other failure cleans up the same way.
 */
export async function connectTransport(
  config: TransportConfig,
  options: ConnectOptions = {},
): Promise<EngineTransport> {
  assertInsideRuntime();
  const { signal } = options;
  signal?.throwIfAborted();
  validate(config, options);
  const sockets = new SocketSet();
  try {
    return config.mode === "handshake-owner"
      ? await connectAsHandshakeOwner(config, options, sockets)
      : await connectBootstrapped(config, options, sockets);
  } catch (error) {
    await sockets.closeAll();
    if (signal?.aborted) throw signal.reason;
    throw error;
  }
}

type OwnerConfig = Extract<TransportConfig, { mode: "handshake-owner" }>;
type BootstrappedConfig = Extract<TransportConfig, { mode: "bootstrapped" }>;

async function connectAsHandshakeOwner(
  config: OwnerConfig,
  options: ConnectOptions,
  sockets: SocketSet,
): Promise<EngineTransport> {
  const { signal } = options;
  const host = config.advertisedHost ?? "127.0.0.1";
  const engineCount = config.engineCount ?? 1;
  const timeoutMs = config.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;

  // 1. Data-plane sockets first: their real endpoints go into every INIT. With the default output bind each
  // engine gets its own output socket, so the ENGINE_CORE_DEAD sentinel (no engine index) names its sender.
  const plane = await bindDataPlane(
    sockets,
    config.localInputAddress ?? tcpAnyPort(host),
    outputBinds(config.localOutputAddress, engineCount, host),
    options.heartbeat,
    signal,
  );

  let coordinator: InprocCoordinator | null = null;
  if (options.coordinator?.mode === "inproc") {
    coordinator = await abortable(InprocCoordinator.open(sockets, host), signal);
  }

  // 2. Handshake ROUTER; closed as soon as every engine said READY. An engine that dies between HELLO and
  // READY (model loading happens in between) shows up as a disconnect instead of a READY timeout; heartbeats
  // keep that connection from idling out behind a NAT and turn a frozen engine into a disconnect too.
  const handshake = sockets.add(
    new zmq.Router({
      ...BASE_SOCKET_OPTIONS,
      ...heartbeatSocketOptions(options.heartbeat),
      ipv6: isIpv6(config.handshakeAddress),
    }),
  );
  enableDisconnectNotify(handshake);
  const handshakeAddress = await abortable(
    sockets.bind(handshake, config.handshakeAddress, "handshake"),
    signal,
  );
  // The k-th engine to say HELLO gets the k-th output socket (all get the one when it is shared).
  const outputFor = (helloOrder: number) => plane.outputs[helloOrder % plane.outputs.length]!;
  const inits = new Map(
    plane.outputs.map((route) => [
      route,
      encodeHandshakeInit({
        addresses: {
          inputs: [plane.inputAddress],
          outputs: [route.address],
          coordinatorInput: coordinator?.inputAddress ?? null,
          coordinatorOutput: coordinator?.outputAddress ?? null,
          frontendStatsPublishAddress: null,
        },
        parallelConfig: {},
      }),
    ]),
  );
  const gate = coordinator;
  const identities = await runHandshake({
    socket: handshake,
    address: handshakeAddress,
    engineCount,
    timeoutMs,
    signal,
    initFor: (helloOrder) => inits.get(outputFor(helloOrder))!,
    coordinatorGate: gate === null ? undefined : () => gate.gate(engineCount, timeoutMs, signal),
  });
  await abortable(sockets.release(handshake), signal);
  const outputOf = new Map([...identities.keys()].map((hex, k) => [hex, outputFor(k).address]));

  // 3. Registrations on the input ROUTER.
  const registered = await awaitRegistrations({
    socket: plane.input,
    address: plane.inputAddress,
    expected: { start: 0, count: engineCount }, // exactly the engines that said HELLO
    timeoutMs,
    signal,
  });
  signal?.throwIfAborted();
  const engines = registered.map((engine) => ({
    ...engine,
    outputAddress: outputOf.get(identityHex(engine.identity))!,
  }));
  return assemble(sockets, plane, engines, coordinator, options);
}

async function connectBootstrapped(
  config: BootstrappedConfig,
  options: ConnectOptions,
  sockets: SocketSet,
): Promise<EngineTransport> {
  const { signal } = options;
  const start = config.engineStartIndex ?? 0;
  const count = config.engineCount ?? 1;
  const plane = await bindDataPlane(
    sockets,
    config.inputAddress,
    [config.outputAddress],
    options.heartbeat,
    signal,
  );
  const registered = await awaitRegistrations({
    socket: plane.input,
    address: plane.inputAddress,
    expected: { start, count },
    timeoutMs: config.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS,
    signal,
  });
  // A supervisor gave every engine the same output address.
  const engines = registered.map((engine) => ({ ...engine, outputAddress: plane.outputs[0]!.address }));
  let coordinator: CoordinatorRuntime | null = null;
  if (options.coordinator?.mode === "external") {
    coordinator = ExternalCoordinator.connect(sockets, options.coordinator.address);
  }
  signal?.throwIfAborted();
  return assemble(sockets, plane, engines, coordinator, options);
}

/** One bind per engine (its own output socket) unless an address is given or there are too many engines. */
export function outputBinds(
  localOutputAddress: string | undefined,
  engineCount: number,
  host: string,
): string[] {
  if (localOutputAddress !== undefined) return [localOutputAddress];
  const count = engineCount <= MAX_PER_ENGINE_OUTPUT_SOCKETS ? engineCount : 1;
  return Array.from({ length: count }, () => tcpAnyPort(host));
}

interface DataPlane {
  input: zmq.Router;
  inputAddress: string;
  outputs: OutputRoute[];
  detectsVanishedEngines: boolean;
}

async function bindDataPlane(
  sockets: SocketSet,
  inputBind: string,
  outputBinds: readonly string[],
  heartbeat: HeartbeatOptions | undefined,
  signal: AbortSignal | undefined,
): Promise<DataPlane> {
  // Like vLLM: unlimited queues (HWM 0) on both sides. ROUTER_MANDATORY makes a send to a vanished engine fail
  // (EHOSTUNREACH) instead of being dropped silently.
  const input = sockets.add(
    new zmq.Router({
      ...BASE_SOCKET_OPTIONS,
      ...heartbeatSocketOptions(heartbeat),
      sendHighWaterMark: 0,
      receiveHighWaterMark: 0,
      mandatory: true,
      ipv6: isIpv6(inputBind),
    }),
  );
  const detectsVanishedEngines = enableDisconnectNotify(input);
  const inputAddress = await abortable(sockets.bind(input, inputBind, "input"), signal);
  const outputs: OutputRoute[] = [];
  for (const bind of outputBinds) {
    const socket = sockets.add(
      new zmq.Pull({ ...BASE_SOCKET_OPTIONS, receiveHighWaterMark: 0, ipv6: isIpv6(bind) }),
    );
    outputs.push({ socket, address: await abortable(sockets.bind(socket, bind, "output"), signal) });
  }
  return { input, inputAddress, outputs, detectsVanishedEngines };
}

function assemble(
  sockets: SocketSet,
  plane: DataPlane,
  engines: ConnectedEngine[],
  coordinator: CoordinatorRuntime | null,
  options: ConnectOptions,
): EngineTransport {
  const { heartbeatInterval, heartbeatTimeout } = heartbeatSocketOptions(options.heartbeat);
  return new ZmqEngineTransport({
    sockets,
    ...plane,
    engines,
    coordinator,
    heartbeatTimeoutMs: heartbeatInterval > 0 ? heartbeatTimeout : 0,
    sentinelAttributionWindowMs: options.sentinelAttributionWindowMs,
  });
}

function isIpv6(address: string): boolean {
  return address.startsWith("tcp://[");
}

function validate(config: TransportConfig, options: ConnectOptions): void {
  const fail = (field: string, detail: string): never => {
    throw new InvalidTransportConfigError({ field, detail });
  };
  const positiveInt = (field: string, value: number | undefined) => {
    if (value !== undefined && !(Number.isInteger(value) && value >= 1))
      fail(field, `must be an integer >= 1, got ${value}`);
  };
  const address = (field: string, value: string | undefined) => {
    if (value !== undefined && !/^(tcp|ipc):\/\/.+/.test(value))
      fail(field, `must be a tcp:// or ipc:// address, got "${value}"`);
  };
  positiveInt("engineCount", config.engineCount);
  positiveInt("readyTimeoutMs", config.readyTimeoutMs);
  if (config.mode === "handshake-owner") {
    address("handshakeAddress", config.handshakeAddress);
    if (config.handshakeAddress === undefined)
      fail("handshakeAddress", "is required in handshake-owner mode");
    address("localInputAddress", config.localInputAddress);
    address("localOutputAddress", config.localOutputAddress);
    if ((config.engineCount ?? 1) > MAX_ENGINE_INDEX + 1)
      fail("engineCount", "must fit the 2-byte engine identity");
    if ((options.clientIndex ?? 0) !== 0) {
      fail(
        "clientIndex",
        `must be 0 in handshake-owner mode (got ${options.clientIndex}): engines send outputs to INIT's outputs[clientIndex] and this INIT lists only this frontend`,
      );
    }
    if (options.coordinator?.mode === "external") {
      fail(
        "coordinator",
        "an external coordinator is only supported in bootstrapped mode (its engine-facing addresses come from the supervisor)",
      );
    }
  } else if (config.mode === "bootstrapped") {
    address("inputAddress", config.inputAddress);
    address("outputAddress", config.outputAddress);
    if (config.inputAddress === undefined) fail("inputAddress", "is required in bootstrapped mode");
    if (config.outputAddress === undefined) fail("outputAddress", "is required in bootstrapped mode");
    const start = config.engineStartIndex ?? 0;
    const count = config.engineCount ?? 1;
    if (!(Number.isInteger(start) && start >= 0))
      fail("engineStartIndex", `must be an integer >= 0, got ${start}`);
    if (start + count - 1 > MAX_ENGINE_INDEX) {
      fail(
        "engineStartIndex",
        `engines ${start}…${start + count - 1} do not fit the 2-byte engine identity (max index ${MAX_ENGINE_INDEX})`,
      );
    }
    if (options.coordinator?.mode === "inproc") {
      fail(
        "coordinator",
        "the in-process coordinator needs handshake-owner mode (its addresses go into INIT)",
      );
    }
  } else {
    fail(
      "mode",
      `must be "handshake-owner" or "bootstrapped", got ${JSON.stringify((config as { mode: unknown }).mode)}`,
    );
  }
  if (options.coordinator?.mode === "external") address("coordinator.address", options.coordinator.address);
  const hb = options.heartbeat;
  if (hb?.intervalMs !== undefined && !(Number.isInteger(hb.intervalMs) && hb.intervalMs >= 0)) {
    fail("heartbeat.intervalMs", `must be an integer >= 0, got ${hb.intervalMs}`);
  }
  if (hb?.timeoutMs !== undefined && !(Number.isInteger(hb.timeoutMs) && hb.timeoutMs >= 1)) {
    fail("heartbeat.timeoutMs", `must be an integer >= 1, got ${hb.timeoutMs}`);
  }
}
