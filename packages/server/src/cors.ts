// CORS as vLLM configures starlette's CORSMiddleware from `--allowed-origins`, `--allowed-methods`,
// `--allowed-headers` (each default ["*"]) and `--allow-credentials` (default off)
// (vllm/entrypoints/openai/api_server.py build_app, cli_args.py FrontendArgs), with @fastify/cors:
// "*" origins answer `*` (the request's origin when credentials are allowed, as browsers refuse `*` then),
// "*" methods are starlette's full list, "*" headers reflect the preflight's requested headers, and a
// preflight answers 200 with max-age 600 as starlette does.
import cors from "@fastify/cors";
import type { FastifyInstance } from "fastify";

export interface CorsOptions {
  allowedOrigins?: readonly string[];
  allowedMethods?: readonly string[];
  allowedHeaders?: readonly string[];
  allowCredentials?: boolean;
}

/** starlette's `ALL_METHODS`. */
const ALL_METHODS = ["DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT"];

export function corsPlugin(app: FastifyInstance, options: CorsOptions): void {
  const origins = options.allowedOrigins ?? ["*"];
  const methods = options.allowedMethods ?? ["*"];
  const headers = options.allowedHeaders ?? ["*"];
  const credentials = options.allowCredentials ?? false;
  const anyOrigin = origins.includes("*");
  app.register(cors, {
    origin: anyOrigin ? (credentials ? true : "*") : [...origins],
    methods: methods.includes("*") ? ALL_METHODS : methods.map((m) => m.toUpperCase()),
    // Absent: @fastify/cors reflects Access-Control-Request-Headers, as starlette does for "*".
    ...(headers.includes("*") ? {} : { allowedHeaders: [...headers] }),
    credentials,
    maxAge: 600,
    optionsSuccessStatus: 200,
    strictPreflight: false,
  });
}
