// `X-Request-Id`, as vLLM uses it. Its serving code takes the header, when a request has one, as the base of
// the request id whatever the flags (`_base_request_id`, vllm/entrypoints/serve/engine/serving.py), then the
// body's `request_id`, then a random id; `--enable-request-id-headers` adds `XRequestIdMiddleware`
// (serve/utils/server_utils.py), which answers every response with `X-Request-Id`: the request's header, or
// a fresh uuid4 hex.
import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyRequest } from "fastify";

/** The header's value, when the request has one (the first, if repeated). */
export function requestIdHeader(request: FastifyRequest): string | undefined {
  const v = request.headers["x-request-id"];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Echoes the header on every response (errors and SSE streams too): set on the raw response at once, so it
 * goes out with whatever writes the head, fastify's send or a hijacked stream's writeHead.
 */
export function requestIdHeaders(app: FastifyInstance): void {
  app.addHook("onRequest", async (request, reply) => {
    reply.raw.setHeader("x-request-id", requestIdHeader(request) ?? randomUUID().replaceAll("-", ""));
  });
}
