// `--api-key` / VLLM_API_KEY, as vLLM's `AuthenticationMiddleware` (vllm/entrypoints/serve/utils/
// server_utils.py): a request whose path (less the root path) starts with /v1, /v2, /inference or /cohere
// needs `Authorization: Bearer <one of the keys>` (the scheme in any case), else 401 with vLLM's body
// `{"error": "Unauthorized"}`; OPTIONS (CORS preflight) and every other path (/health, /metrics, /version,
// /tokenize, …) are open. Keys are compared as SHA-256 digests in constant time, all of them every time.
import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyInstance } from "fastify";

/** vLLM's `GUARDED_PREFIX`: a plain prefix test, as Python's `str.startswith` does it. */
const GUARDED_PREFIXES = ["/v1", "/v2", "/inference", "/cohere"];

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();

/** True when `authorization` carries one of the keys (digests given). */
export function bearerMatches(authorization: string | undefined, keyDigests: readonly Buffer[]): boolean {
  if (!authorization) return false;
  const space = authorization.indexOf(" ");
  const scheme = space === -1 ? authorization : authorization.slice(0, space);
  const param = space === -1 ? "" : authorization.slice(space + 1);
  if (scheme.toLowerCase() !== "bearer") return false;
  const given = digest(param);
  let match = false;
  for (const key of keyDigests) match = timingSafeEqual(given, key) || match;
  return match;
}

/** Registers the check (an onRequest hook, so it runs before the body is read). */
export function apiKeyAuth(app: FastifyInstance, keys: readonly string[]): void {
  const keyDigests = keys.filter((k) => k !== "").map(digest);
  if (keyDigests.length === 0) return;
  app.addHook("onRequest", async (request, reply) => {
    if (request.method === "OPTIONS") return;
    const path = request.url.split("?", 1)[0]!;
    if (!GUARDED_PREFIXES.some((p) => path.startsWith(p))) return;
    if (bearerMatches(request.headers.authorization, keyDigests)) return;
    return reply.status(401).send({ error: "Unauthorized" });
  });
}
