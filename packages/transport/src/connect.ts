import type {
  ResolvedBootstrappedTransport,
  ResolvedConfig,
  ResolvedHandshakeOwnerTransport,
  ResolvedHeartbeat,
  ResolvedTransportTuning,
} from "@vllm-engine-core/config";
import { encodeHandshakeInit } from "@vllm-engine-core/protocol";
import * as zmq from "zeromq";
import {
  type CoordinatorRuntime,
  ExternalCoordinator,
  InprocCoordinator,
  tcpAnyPort,
} from "./coordinator.js";
import { type OutputRoute, ZmqEngineTransport } from "./engine-transport.js";
import { assertInsideRuntime } from "./guard.js";
import { runHandshake } from "./handshake.js";
import { identityHex } from "./identity.js";
import { enableDisconnectNotify, heartbeatSocketOptions } from "./liveness.js";
import { awaitRegistrations } from "./registration.js";
import { BASE_SOCKET_OPTIONS, SocketSet } from "./sockets.js";
import type { ConnectedEngine, ConnectOptions, EngineTransport } from "./types.js";
import { abortable } from "./waits.js";

/**
 * Up to this many engines, each gets its own output socket (see step 1 below); beyond it they share one:
 * every socket costs file descriptors, and zeromq.js allows 1023 sockets per context.
 */
export const MAX_PER_ENGINE_OUTPUT_SOCKETS = 128;

/**
 * Binds the frontend sockets, brings up `engineCount` engines (handshake-owner or bootstrapped) and returns the
 * connected transport. Runs only on the runtime worker thread. `config` is taken as it is: it was resolved
 * (validated, every default filled in) by `resolveConfig` of @vllm-engine-core/config on the thread that
 * opened the connection. Aborting `options.signal` at any stage closes every socket opened so far (their
 * addresses are free again when the promise settles) and rejects with the signal's reason; any other failure
 * cleans up the same way.
 */
export async function connectTransport(
  config: ResolvedConfig,
  options: ConnectOptions = {},
): Promise<EngineTransport> {
  assertInsideRuntime();
  const { signal } = options;
  signal?.throwIfAborted();
  const sockets = new SocketSet();
  try {
    return config.transport.mode === "handshake-owner"
      ? await connectAsHandshakeOwner(config.transport, config, signal, sockets)
      : await connectBootstrapped(config.transport, config, signal, sockets);
  } catch (error) {
    await sockets.closeAll();
    if (signal?.aborted) throw signal.reason;
    throw error;
  }
}

async function connectAsHandshakeOwner(
  config: ResolvedHandshakeOwnerTransport,
  { coordinator: coordinatorConfig }: ResolvedConfig,
  signal: AbortSignal | undefined,
  sockets: SocketSet,
): Promise<EngineTransport> {
  const { advertisedHost: host, engineCount, readyTimeoutMs: timeoutMs } = config;

  // 1. Data-plane sockets first: their real endpoints go into every INIT. With the default output bind each
  // engine gets its own output socket, so the ENGINE_CORE_DEAD sentinel (no engine index) names its sender.
  const plane = await bindDataPlane(
    sockets,
    config.localInputAddress ?? tcpAnyPort(host),
    outputBinds(config.localOutputAddress, engineCount, host),
    config.heartbeat,
    signal,
  );

  let coordinator: InprocCoordinator | null = null;
  if (coordinatorConfig?.mode === "inproc") {
    coordinator = await abortable(InprocCoordinator.open(sockets, host), signal);
  }

  // 2. Handshake ROUTER; closed as soon as every engine said READY. An engine that dies between HELLO and
  // READY (model loading happens in between) shows up as a disconnect instead of a READY timeout; heartbeats
  // keep that connection from idling out behind a NAT and turn a frozen engine into a disconnect too.
  const handshake = sockets.add(
    new zmq.Router({
      ...BASE_SOCKET_OPTIONS,
      ...heartbeatSocketOptions(config.heartbeat),
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
  return assemble(sockets, plane, engines, coordinator, config);
}

async function connectBootstrapped(
  config: ResolvedBootstrappedTransport,
  { coordinator: coordinatorConfig }: ResolvedConfig,
  signal: AbortSignal | undefined,
  sockets: SocketSet,
): Promise<EngineTransport> {
  const plane = await bindDataPlane(
    sockets,
    config.inputAddress,
    [config.outputAddress],
    config.heartbeat,
    signal,
  );
  const registered = await awaitRegistrations({
    socket: plane.input,
    address: plane.inputAddress,
    expected: { start: config.engineStartIndex, count: config.engineCount },
    timeoutMs: config.readyTimeoutMs,
    signal,
  });
  // A supervisor gave every engine the same output address.
  const engines = registered.map((engine) => ({ ...engine, outputAddress: plane.outputs[0]!.address }));
  let coordinator: CoordinatorRuntime | null = null;
  if (coordinatorConfig?.mode === "external") {
    coordinator = ExternalCoordinator.connect(sockets, coordinatorConfig.address);
  }
  signal?.throwIfAborted();
  return assemble(sockets, plane, engines, coordinator, config);
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
  heartbeat: ResolvedHeartbeat,
  signal: AbortSignal | undefined,
): Promise<DataPlane> {
  // Like vLLM: unlimited queues (HWM 0) on both sides. ROUTER_MANDATORY makes a send to a vanished engine fail
  // (EHOSTUNREACH) instead of being dropped silently.
  // sendTimeout 0: a send is tried once, at once. With MANDATORY a ROUTER is writable only while some engine's
  // pipe is, so once the last live engine's connection dropped zeromq.js would wait for writability forever
  // (during the vanish grace, before the death is reported) and every later send queued behind it would hang.
  // With unlimited queues a send that cannot proceed at once can only mean the engine's pipe is gone
  // (EHOSTUNREACH) or being torn down (EAGAIN); engine-transport.ts turns both into EngineDeadError.
  const input = sockets.add(
    new zmq.Router({
      ...BASE_SOCKET_OPTIONS,
      ...heartbeatSocketOptions(heartbeat),
      sendHighWaterMark: 0,
      receiveHighWaterMark: 0,
      sendTimeout: 0,
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
  tuning: ResolvedTransportTuning,
): EngineTransport {
  return new ZmqEngineTransport({
    sockets,
    ...plane,
    engines,
    coordinator,
    heartbeatTimeoutMs: tuning.heartbeat.intervalMs > 0 ? tuning.heartbeat.timeoutMs : 0,
    sentinelAttributionWindowMs: tuning.sentinelAttributionWindowMs,
    vanishGraceMs: tuning.vanishGraceMs,
  });
}

function isIpv6(address: string): boolean {
  return address.startsWith("tcp://[");
}
