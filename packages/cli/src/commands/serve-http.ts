// `serve`'s HTTP flags, spelled as vLLM's `vllm serve` spells them (vllm/entrypoints/openai/cli_args.py
// FrontendArgs / BaseFrontendArgs), and their translation into the server's options: API keys (else the
// VLLM_API_KEY environment variable, as vllm/entrypoints/openai/api_server.py build_app falls back to it),
// CORS lists as JSON (vLLM parses them with json.loads), the request-id header, the root path, TLS files,
// token ids in logprobs, and LoRA modules (`name=path` or vLLM's JSON object).
import { readFileSync } from "node:fs";
import type { LoraModule } from "@vllm-engine-core/server";
import { bool, type FlagSpec, int, list, type ParsedArgs, str } from "../args.js";
import { CliUsageError } from "../errors.js";

export const SERVE_HTTP_FLAGS: FlagSpec[] = [
  {
    name: "api-key",
    type: "string",
    multiple: true,
    nargs: true,
    value: "KEY",
    help: "require `Authorization: Bearer KEY` on /v1/* (several keys: any one; default $VLLM_API_KEY)",
  },
  {
    name: "allowed-origins",
    type: "string",
    value: "JSON",
    help: 'CORS origins as a JSON list (default ["*"])',
  },
  {
    name: "allowed-methods",
    type: "string",
    value: "JSON",
    help: 'CORS methods as a JSON list (default ["*"])',
  },
  {
    name: "allowed-headers",
    type: "string",
    value: "JSON",
    help: 'CORS request headers as a JSON list (default ["*"])',
  },
  { name: "allow-credentials", type: "boolean", help: "CORS: allow credentials (default off)" },
  {
    name: "enable-request-id-headers",
    type: "boolean",
    help: "answer every response with X-Request-Id (the request's, or a fresh one)",
  },
  {
    name: "root-path",
    type: "string",
    value: "PATH",
    help: "the path prefix of a path-routing proxy in front (served with and without it)",
  },
  { name: "ssl-keyfile", type: "string", value: "FILE", help: "TLS: the private key (PEM)" },
  { name: "ssl-certfile", type: "string", value: "FILE", help: "TLS: the certificate chain (PEM)" },
  {
    name: "ssl-ca-certs",
    type: "string",
    value: "FILE",
    help: "TLS: CA certificates to verify client certificates with (PEM)",
  },
  {
    name: "ssl-cert-reqs",
    type: "string",
    value: "N",
    help: "TLS client certificates: 0 none (default), 1 optional, 2 required (Python's ssl.CERT_*)",
  },
  {
    name: "return-tokens-as-token-ids",
    type: "boolean",
    help: "logprobs tokens as `token_id:N` (a request's return_tokens_as_token_ids wins)",
  },
  {
    name: "stream-interval",
    type: "string",
    value: "N",
    help: "tokens per streamed chunk (default 1; a request's stream_interval may raise it); first and last chunks at once",
  },
  {
    name: "lora-modules",
    type: "string",
    multiple: true,
    nargs: true,
    value: "SPEC",
    help: 'LoRA adapters served as models: name=path, or {"name": …, "path": …, "base_model_name": …}',
  },
];

/** The server options these flags give (the parts of `ServerOptions` they own). */
export interface HttpOptions {
  apiKeys: string[];
  cors: {
    allowedOrigins?: string[];
    allowedMethods?: string[];
    allowedHeaders?: string[];
    allowCredentials: boolean;
  };
  enableRequestIdHeaders: boolean;
  rootPath?: string;
  returnTokensAsTokenIds: boolean;
  /** vLLM's `--stream-interval` (an engine argument there: its output processor reads it). */
  streamInterval?: number;
  loraModules: LoraModule[];
  https?: { key: Buffer; cert: Buffer; ca?: Buffer; requestCert?: boolean; rejectUnauthorized?: boolean };
}

function jsonList(args: ParsedArgs, command: string, name: string): string[] | undefined {
  const raw = str(args, name);
  if (raw === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    throw new CliUsageError(
      `--${name} needs a JSON list of strings (vLLM parses it with json.loads), got ${raw}`,
      command,
    );
  }
  if (!Array.isArray(v) || !v.every((x) => typeof x === "string")) {
    throw new CliUsageError(
      `--${name} needs a JSON list of strings, e.g. '["https://ui.example"]', got ${raw}`,
      command,
    );
  }
  return v as string[];
}

function readPem(command: string, flag: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new CliUsageError(`--${flag} ${path}: ${(error as Error).message}`, command);
  }
}

export function httpOptions(
  args: ParsedArgs,
  command: string,
  env: NodeJS.ProcessEnv,
  parseLoraModules: (values: readonly string[]) => LoraModule[],
): HttpOptions {
  // vLLM: `args.api_key or [envs.VLLM_API_KEY]`, empty keys dropped.
  const given = list(args, "api-key");
  const apiKeys = (given.length > 0 ? given : [env.VLLM_API_KEY ?? ""]).filter((k) => k !== "");
  const allowedOrigins = jsonList(args, command, "allowed-origins");
  const allowedMethods = jsonList(args, command, "allowed-methods");
  const allowedHeaders = jsonList(args, command, "allowed-headers");
  const keyfile = str(args, "ssl-keyfile");
  const certfile = str(args, "ssl-certfile");
  if ((keyfile === undefined) !== (certfile === undefined)) {
    throw new CliUsageError("TLS needs both --ssl-keyfile and --ssl-certfile", command);
  }
  const certReqs = int(args, command, "ssl-cert-reqs", { min: 0, max: 2 }) ?? 0;
  const caFile = str(args, "ssl-ca-certs");
  let https: HttpOptions["https"];
  if (keyfile !== undefined && certfile !== undefined) {
    https = {
      key: readPem(command, "ssl-keyfile", keyfile),
      cert: readPem(command, "ssl-certfile", certfile),
      ...(caFile === undefined ? {} : { ca: readPem(command, "ssl-ca-certs", caFile) }),
      // Python's CERT_OPTIONAL asks for a certificate and accepts none; CERT_REQUIRED refuses the handshake.
      ...(certReqs === 0 ? {} : { requestCert: true, rejectUnauthorized: certReqs === 2 }),
    };
  } else if (caFile !== undefined || certReqs !== 0) {
    throw new CliUsageError(
      "--ssl-ca-certs and --ssl-cert-reqs need --ssl-keyfile and --ssl-certfile",
      command,
    );
  }
  let loraModules: LoraModule[];
  try {
    loraModules = parseLoraModules(list(args, "lora-modules"));
  } catch (error) {
    throw new CliUsageError((error as Error).message, command);
  }
  const rootPath = str(args, "root-path");
  const streamInterval = int(args, command, "stream-interval", { min: 1 });
  return {
    apiKeys,
    cors: {
      ...(allowedOrigins ? { allowedOrigins } : {}),
      ...(allowedMethods ? { allowedMethods } : {}),
      ...(allowedHeaders ? { allowedHeaders } : {}),
      allowCredentials: bool(args, "allow-credentials"),
    },
    enableRequestIdHeaders: bool(args, "enable-request-id-headers"),
    ...(rootPath === undefined ? {} : { rootPath }),
    returnTokensAsTokenIds: bool(args, "return-tokens-as-token-ids"),
    ...(streamInterval === undefined ? {} : { streamInterval }),
    loraModules,
    ...(https ? { https } : {}),
  };
}
