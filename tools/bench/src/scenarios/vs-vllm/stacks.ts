// The two sides, each in front of its own real vLLM engine core (the model-free executor of
// tools/vllm-executor) with the same flags and executor options:
// - vLLM: `vllm serve DIR` — vLLM's Python OpenAI server (API server in the leader process) and its engine
//   core in a child process it spawns;
// - ours: `vllm serve DIR --headless` (the same engine core, in its own child process) and
//   `vllm-engine-core serve` (packages/cli) bound to its handshake address.
// Both engines load the tokenizer (no --skip-tokenizer-init) and log stats (no --disable-log-stats), as
// `vllm serve` does by default. Each side says which processes are its server and which its engine.
import { join } from "node:path";
import {
  type EngineFlags,
  type ExecutorOptions,
  freePort,
  prepareServerModelDir,
  type RealEngineKit,
  repoRoot,
  spawnVllmProcess,
  startRealEngine,
  startVllmServer,
  type VllmProcess,
} from "@vllm-engine-core/real-engine";
import { SERVED_MODEL } from "./bench-client.js";
import { descendants, type Roles, readProcessTable } from "./proc.js";

export type Side = "vllm" | "ours";

export interface Stack {
  readonly side: Side;
  readonly baseUrl: string;
  /** The server's and the engine's processes now (the client's pid is added per run). */
  roles(clientPid: number): Roles;
  stop(): Promise<void>;
}

export interface StackOptions {
  readonly kit: RealEngineKit;
  readonly flags: EngineFlags;
  readonly executor: ExecutorOptions;
  /** Bound on start-up (engine + server). */
  readonly timeoutMs: number;
}

/** vLLM names its engine-core process in every line it logs: `(EngineCore pid=123)`, `(EngineCore_DP0 pid=…)`. */
export const ENGINE_CORE_LOG = /\(EngineCore[^\s)]* pid=(\d+)\)/;

export function engineCorePid(line: string): number {
  const pid = Number(ENGINE_CORE_LOG.exec(line)?.[1]);
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no engine-core pid in vLLM's log line: ${line}`);
  return pid;
}

/** Server = the tree under `serverRoot` without the engine's tree (vLLM's engine core is a child of its server). */
export function splitRoles(
  table: Parameters<typeof descendants>[0],
  serverRoot: number,
  engineRoot: number,
  clientRoot: number,
): Roles {
  const engine = descendants(table, engineRoot);
  const inEngine = new Set(engine);
  return {
    server: descendants(table, serverRoot).filter((pid) => !inEngine.has(pid)),
    engine,
    client: descendants(table, clientRoot),
  };
}

async function stopQuietly(process: VllmProcess | undefined): Promise<void> {
  await process?.stop(10_000).catch(() => {});
}

export async function startVllmStack(o: StackOptions): Promise<Stack> {
  const { streamInterval } = oursServerSetup();
  const server = startVllmServer({
    kit: o.kit,
    port: await freePort(),
    servedModelName: SERVED_MODEL,
    ...o.flags,
    extraFlags: [...(o.flags.extraFlags ?? []), "--stream-interval", String(streamInterval)],
    executor: o.executor,
    env: { PYTHONUNBUFFERED: "1" },
  });
  try {
    await server.ready(o.timeoutMs);
    const enginePid = engineCorePid(await server.waitForLog(ENGINE_CORE_LOG, 1000));
    return {
      side: "vllm",
      baseUrl: server.baseUrl,
      roles: (clientPid) => splitRoles(readProcessTable(), server.pid, enginePid, clientPid),
      stop: () => stopQuietly(server),
    };
  } catch (error) {
    await stopQuietly(server);
    throw error;
  }
}

const CLI = join(repoRoot, "packages", "cli", "bin", "vllm-engine-core.js");

/**
 * How our server runs: `--api-server-count` (VS_VLLM_API_SERVERS, default 1; more needs Node.js ≥ 22.12) and
 * the Node.js binary (VS_VLLM_OURS_NODE, default this one's); and both servers' `--stream-interval`
 * (VS_VLLM_STREAM_INTERVAL, default 1: vLLM's default).
 */
export function oursServerSetup(env: NodeJS.ProcessEnv = process.env): {
  apiServers: number;
  node: string;
  streamInterval: number;
} {
  const positive = (name: string) => {
    const value = Number(env[name] ?? 1);
    if (!Number.isInteger(value) || value < 1) {
      throw new Error(`${name} must be a positive integer, got ${env[name]}`);
    }
    return value;
  };
  return {
    apiServers: positive("VS_VLLM_API_SERVERS"),
    node: env.VS_VLLM_OURS_NODE || process.execPath,
    streamInterval: positive("VS_VLLM_STREAM_INTERVAL"),
  };
}
const LISTENING = /serving "[^"]+" on (http:\/\/[^\s]+:\d+)/;

export async function startOursStack(o: StackOptions): Promise<Stack> {
  const model = prepareServerModelDir();
  const engine = startRealEngine({
    kit: o.kit,
    port: await freePort(),
    modelDir: model.dir,
    skipTokenizerInit: false,
    ...o.flags,
    executor: o.executor,
    env: { PYTHONUNBUFFERED: "1" },
  });
  const setup = oursServerSetup();
  const cli = spawnVllmProcess(
    setup.node,
    [
      CLI,
      "serve",
      "--model",
      model.dir,
      "--served-model-name",
      SERVED_MODEL,
      "--handshake-address",
      engine.handshakeAddress,
      "--port",
      String(await freePort()),
      "--api-server-count",
      String(setup.apiServers),
      "--stream-interval",
      String(setup.streamInterval),
    ],
    process.env,
  );
  const stop = async () => {
    await stopQuietly(cli);
    await stopQuietly(engine);
    model.remove();
  };
  try {
    const died = engine.exited.then((info) => {
      throw new Error(
        `vLLM's headless engine exited (code ${info.code}) before our server listened:\n${engine.logLines.slice(-20).join("\n")}`,
      );
    });
    died.catch(() => {});
    const listening = cli
      .waitForLog(LISTENING, o.timeoutMs)
      .then((line) => LISTENING.exec(line)?.[1] as string);
    const baseUrl = await Promise.race([listening, died]);
    const enginePid = engineCorePid(await engine.waitForLog(ENGINE_CORE_LOG, 5000));
    const serverPid = cli.pid;
    return {
      side: "ours",
      baseUrl,
      roles: (clientPid) => splitRoles(readProcessTable(), serverPid, enginePid, clientPid),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

export function startStack(side: Side, o: StackOptions): Promise<Stack> {
  return side === "vllm" ? startVllmStack(o) : startOursStack(o);
}
