// CORS as vLLM configures starlette's CORSMiddleware from `--allowed-origins`, `--allowed-methods`,
// `--allowed-headers` (each default ["*"]) and `--allow-credentials` (default off)
// (vllm/entrypoints/openai/api_server.py build_app, cli_args.py FrontendArgs), with @fastify/cors:
// "*" origins answer `*` (the request's origin when credentials are allowed: starlette does so for a
// preflight and for a request with cookies), "*" methods are starlette's full list, "*" headers reflect the
// preflight's requested headers, lists are joined with ", ", and a preflight answers 200 with max-age 600.
import cors from "@fastify/cors";
import type { FastifyInstance } from "fastify";

export interface CorsOptions {
  allowedOrigins?: readonly string[];
  allowedMethods?: readonly string[];
  allowedHeaders?: readonly string[];
  allowCredentials?: boolean;
}

/** starlette's `ALL_METHODS` (the version vLLM's environment pins). */
const ALL_METHODS = ["DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "QUERY"];
/** starlette's `SAFELISTED_HEADERS`, always allowed beside the listed ones. */
const SAFELISTED_HEADERS = ["Accept", "Accept-Language", "Content-Language", "Content-Type"];

export function corsPlugin(app: FastifyInstance, options: CorsOptions): void {
  const origins = options.allowedOrigins ?? ["*"];
  const methods = options.allowedMethods ?? ["*"];
  const headers = options.allowedHeaders ?? ["*"];
  const credentials = options.allowCredentials ?? false;
  const anyOrigin = origins.includes("*");
  // starlette answers a preflight it refuses with 400 "Disallowed CORS <what>" (@fastify/cors would answer
  // 200 without the headers): the same checks, in starlette's order, before @fastify/cors sees it.
  const allowedMethods = methods.includes("*") ? ALL_METHODS : methods;
  const allowedHeaderSet = new Set([...SAFELISTED_HEADERS, ...headers].map((h) => h.toLowerCase()));
  app.addHook("onRequest", async (request, reply) => {
    const origin = request.headers.origin;
    const method = request.headers["access-control-request-method"];
    if (request.method !== "OPTIONS" || origin === undefined || typeof method !== "string") return;
    const failures: string[] = [];
    if (!anyOrigin && !origins.includes(origin)) failures.push("origin");
    if (!allowedMethods.includes(method)) failures.push("method");
    const requested = request.headers["access-control-request-headers"];
    if (!headers.includes("*") && typeof requested === "string") {
      if (requested.split(",").some((h) => !allowedHeaderSet.has(h.toLowerCase().trim())))
        failures.push("headers");
    }
    if (failures.length === 0) return;
    return reply
      .status(400)
      .type("text/plain; charset=utf-8")
      .send(`Disallowed CORS ${failures.join(", ")}`);
  });
  app.register(cors, {
    origin: anyOrigin ? (credentials ? true : "*") : [...origins],
    methods: methods.includes("*") ? ALL_METHODS : [...methods],
    // Absent: @fastify/cors reflects Access-Control-Request-Headers, as starlette does for "*"; a list is
    // starlette's `sorted(SAFELISTED_HEADERS | set(allow_headers))` (code-point order, as Python sorts).
    ...(headers.includes("*")
      ? {}
      : {
          allowedHeaders: [...new Set([...SAFELISTED_HEADERS, ...headers])].sort((a, b) =>
            a < b ? -1 : a > b ? 1 : 0,
          ),
        }),
    credentials,
    maxAge: 600,
    optionsSuccessStatus: 200,
    strictPreflight: false,
  });
}
