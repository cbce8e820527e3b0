// What an operator configures on `serve`, each against vLLM's behaviour: the API key (AuthenticationMiddleware),
// CORS (starlette's CORSMiddleware with vLLM's flags), X-Request-Id (XRequestIdMiddleware), the root path,
// LoRA modules in /v1/models (OpenAIServingModels), TLS. Driven with fastify's inject and a stub engine
// client (no route here reaches the engine), TLS over a real socket.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TLSSocket } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type EngineClient, parseLoraModules, type ServerOptions } from "../src/index.js";
import { MODEL, QWEN3_DIR, qwen3 } from "./helpers.js";

const added: unknown[] = [];
const stubClient: EngineClient = {
  healthError: null,
  maxModelLen: 64,
  vllmVersion: "0.0.0-test",
  call: () => Promise.reject(new Error("no engine in this test")),
  addLora: async (lora: unknown) => {
    added.push(lora);
    return true;
  },
} as unknown as EngineClient;

function server(options: Partial<ServerOptions> = {}) {
  return createServer({
    client: stubClient,
    tokenizer: qwen3(),
    modelPath: QWEN3_DIR,
    servedModelName: MODEL,
    ...options,
  });
}

describe("--api-key (vLLM's AuthenticationMiddleware)", () => {
  const app = server({ apiKeys: ["key-one", "key-two"] });
  afterAll(() => app.close());

  it("/v1/* without a key, with a wrong one or another scheme: 401 {error: Unauthorized}", async () => {
    for (const authorization of [undefined, "Bearer nope", "Basic key-one", "Bearer", "key-one"]) {
      const r = await app.inject({
        method: "GET",
        url: "/v1/models",
        headers: authorization === undefined ? {} : { authorization },
      });
      expect([authorization, r.statusCode, r.json()]).toEqual([
        authorization,
        401,
        { error: "Unauthorized" },
      ]);
    }
    const post = await app.inject({ method: "POST", url: "/v1/completions", payload: { prompt: "hi" } });
    expect(post.statusCode).toBe(401);
  });

  it("either key, the scheme in any case: through", async () => {
    for (const authorization of ["Bearer key-one", "bearer key-two", "BEARER key-one"]) {
      const r = await app.inject({ method: "GET", url: "/v1/models", headers: { authorization } });
      expect([authorization, r.statusCode]).toEqual([authorization, 200]);
    }
  });

  it("paths outside /v1, /v2, /inference, /cohere are open; OPTIONS is never checked", async () => {
    for (const url of ["/health", "/version"]) {
      expect((await app.inject({ method: "GET", url })).statusCode).toBe(200);
    }
    const tokenize = await app.inject({ method: "POST", url: "/tokenize", payload: { prompt: "hi" } });
    expect(tokenize.statusCode).toBe(200);
    // A guarded prefix with no route: 401 before routing, as the middleware runs first in vLLM.
    expect((await app.inject({ method: "GET", url: "/v2/anything" })).statusCode).toBe(401);
    const preflight = await app.inject({
      method: "OPTIONS",
      url: "/v1/chat/completions",
      headers: { origin: "https://ui.example", "access-control-request-method": "POST" },
    });
    expect(preflight.statusCode).toBe(200);
  });
});

describe("CORS (vLLM's flags over starlette's CORSMiddleware)", () => {
  it("defaults (all origins, methods, headers; no credentials): `*`, preflight 200 with max-age 600", async () => {
    const app = server();
    const r = await app.inject({
      method: "GET",
      url: "/v1/models",
      headers: { origin: "https://a.example" },
    });
    expect(r.headers["access-control-allow-origin"]).toBe("*");
    expect(r.headers["access-control-allow-credentials"]).toBeUndefined();
    const pre = await app.inject({
      method: "OPTIONS",
      url: "/v1/completions",
      headers: {
        origin: "https://a.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, x-custom",
      },
    });
    expect(pre.statusCode).toBe(200);
    expect(pre.headers["access-control-allow-origin"]).toBe("*");
    expect(pre.headers["access-control-allow-methods"]).toBe(
      "DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT, QUERY",
    );
    expect(pre.headers["access-control-allow-headers"]).toBe("authorization, x-custom");
    expect(pre.headers["access-control-max-age"]).toBe("600");
    await app.close();
  });

  it("listed origins with credentials: the allowed origin echoed, others get no CORS header", async () => {
    const app = server({
      cors: {
        allowedOrigins: ["https://ui.example"],
        allowedMethods: ["GET", "post"],
        allowedHeaders: ["authorization"],
        allowCredentials: true,
      },
    });
    const ok = await app.inject({
      method: "GET",
      url: "/v1/models",
      headers: { origin: "https://ui.example" },
    });
    expect(ok.headers["access-control-allow-origin"]).toBe("https://ui.example");
    expect(ok.headers["access-control-allow-credentials"]).toBe("true");
    const other = await app.inject({
      method: "GET",
      url: "/v1/models",
      headers: { origin: "https://evil.example" },
    });
    expect(other.headers["access-control-allow-origin"]).toBeUndefined();
    const pre = await app.inject({
      method: "OPTIONS",
      url: "/v1/completions",
      headers: { origin: "https://ui.example", "access-control-request-method": "GET" },
    });
    expect(pre.headers["access-control-allow-methods"]).toBe("GET, post");
    // Refused preflights: starlette's 400 and its words (methods compared as given, so "POST" ≠ "post").
    const refused = async (headers: Record<string, string>) => {
      const r = await app.inject({ method: "OPTIONS", url: "/v1/completions", headers });
      return [r.statusCode, r.body];
    };
    expect(await refused({ origin: "https://evil.example", "access-control-request-method": "GET" })).toEqual(
      [400, "Disallowed CORS origin"],
    );
    expect(
      await refused({
        origin: "https://evil.example",
        "access-control-request-method": "DELETE",
        "access-control-request-headers": "x-other",
      }),
    ).toEqual([400, "Disallowed CORS origin, method, headers"]);
    expect(await refused({ origin: "https://ui.example", "access-control-request-method": "post" })).toEqual([
      200,
      "",
    ]);
    expect(pre.headers["access-control-allow-headers"]).toBe(
      "Accept, Accept-Language, Content-Language, Content-Type, authorization",
    );
    await app.close();
  });

  it("a 401 carries no CORS headers (vLLM's auth middleware sits outside CORS)", async () => {
    const app = server({ apiKeys: ["k"] });
    const r = await app.inject({
      method: "GET",
      url: "/v1/models",
      headers: { origin: "https://a.example" },
    });
    expect(r.statusCode).toBe(401);
    expect(r.headers["access-control-allow-origin"]).toBeUndefined();
    await app.close();
  });
});

describe("--enable-request-id-headers (vLLM's XRequestIdMiddleware)", () => {
  it("echoes the request's X-Request-Id, or answers a fresh uuid4 hex; every response, errors too", async () => {
    const app = server({ enableRequestIdHeaders: true, apiKeys: ["k"] });
    const given = await app.inject({ method: "GET", url: "/health", headers: { "x-request-id": "abc-123" } });
    expect(given.headers["x-request-id"]).toBe("abc-123");
    const fresh = await app.inject({ method: "GET", url: "/health" });
    expect(fresh.headers["x-request-id"]).toMatch(/^[0-9a-f]{32}$/);
    const denied = await app.inject({
      method: "GET",
      url: "/v1/models",
      headers: { "x-request-id": "r-401" },
    });
    expect([denied.statusCode, denied.headers["x-request-id"]]).toEqual([401, "r-401"]);
    await app.close();
  });

  it("off by default: no X-Request-Id header", async () => {
    const app = server();
    const r = await app.inject({ method: "GET", url: "/health", headers: { "x-request-id": "abc" } });
    expect(r.headers["x-request-id"]).toBeUndefined();
    await app.close();
  });
});

describe("--root-path", () => {
  it("paths under the root path are served without it, others as they are; the key check sees the stripped path", async () => {
    const app = server({ rootPath: "/api/", apiKeys: ["k"] });
    const auth = { authorization: "Bearer k" };
    expect((await app.inject({ method: "GET", url: "/api/v1/models", headers: auth })).statusCode).toBe(200);
    expect((await app.inject({ method: "GET", url: "/v1/models", headers: auth })).statusCode).toBe(200);
    expect((await app.inject({ method: "GET", url: "/api/v1/models" })).statusCode).toBe(401);
    expect((await app.inject({ method: "GET", url: "/api/health" })).statusCode).toBe(200);
    expect((await app.inject({ method: "GET", url: "/apiv1/models", headers: auth })).statusCode).toBe(404);
    await app.close();
  });
});

describe("/v1/models and --lora-modules (vLLM's OpenAIServingModels)", () => {
  it("parses vLLM's two forms: name=path and the JSON object", () => {
    expect(
      parseLoraModules([
        "sql=/loras/sql",
        "",
        '{"name": "chat", "path": "/loras/chat", "base_model_name": "qwen3-test"}',
      ]),
    ).toEqual([
      { name: "sql", path: "/loras/sql" },
      { name: "chat", path: "/loras/chat", baseModelName: "qwen3-test" },
    ]);
    expect(() => parseLoraModules(["a=b=c"])).toThrow(/INVALID|name=path/);
    expect(() => parseLoraModules(["{not json"])).toThrow(/Invalid JSON format for --lora-modules/);
    expect(() => parseLoraModules(['{"name": "x"}'])).toThrow(/Invalid fields for --lora-modules/);
    expect(() => parseLoraModules(['{"name": "x", "path": "p", "rank": 8}'])).toThrow(/unexpected rank/);
  });

  it("the base card with one ModelPermission, then each adapter (ids 1, 2, … loaded at start)", async () => {
    added.length = 0;
    const app = server({ loraModules: parseLoraModules(["sql=/loras/sql", "chat=/loras/chat"]) });
    await app.ready();
    expect(added).toEqual([
      { loraName: "sql", loraIntId: 1, loraPath: "/loras/sql" },
      { loraName: "chat", loraIntId: 2, loraPath: "/loras/chat" },
    ]);
    const list = (await app.inject({ method: "GET", url: "/v1/models" })).json();
    expect(list.object).toBe("list");
    expect(list.data.map((c: { id: string }) => c.id)).toEqual([MODEL, "sql", "chat"]);
    const [base, sql] = list.data;
    expect(base).toEqual({
      id: MODEL,
      object: "model",
      created: expect.any(Number),
      owned_by: "vllm",
      root: QWEN3_DIR,
      parent: null,
      max_model_len: 64,
      permission: [
        {
          id: expect.stringMatching(/^modelperm-[0-9a-f]{32}$/),
          object: "model_permission",
          created: expect.any(Number),
          allow_create_engine: false,
          allow_sampling: true,
          allow_logprobs: true,
          allow_search_indices: false,
          allow_view: true,
          allow_fine_tuning: false,
          organization: "*",
          group: null,
          is_blocking: false,
        },
      ],
    });
    expect(sql).toMatchObject({ id: "sql", root: "/loras/sql", parent: MODEL, max_model_len: null });
    expect(sql.permission).toHaveLength(1);
    await app.close();
  });

  it("an adapter the engines refuse stops the server from starting, naming it", async () => {
    const refusing = { ...stubClient, addLora: async () => false } as EngineClient;
    const app = createServer({
      client: refusing,
      tokenizer: qwen3(),
      modelPath: QWEN3_DIR,
      loraModules: [{ name: "bad", path: "/nowhere" }],
    });
    await expect(app.ready()).rejects.toThrow(/LoRA adapter "bad"/);
  });
});

describe("TLS (--ssl-keyfile, --ssl-certfile)", () => {
  let dir: string;
  let key: Buffer;
  let cert: Buffer;
  beforeAll(() => {
    // A self-signed certificate made now with the openssl CLI (nothing committed).
    dir = mkdtempSync(join(tmpdir(), "vec-tls-"));
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
        "-days",
        "1",
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
      ],
      { stdio: "ignore" },
    );
    key = readFileSync(join(dir, "key.pem"));
    cert = readFileSync(join(dir, "cert.pem"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("serves HTTPS with the given key and certificate", async () => {
    const app = server({ https: { key, cert } });
    await app.listen({ host: "127.0.0.1", port: 0 });
    try {
      const address = app.server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      const body = await new Promise<{ status: number; text: string; peer: string }>((resolve, reject) => {
        const req = httpsRequest({ host: "127.0.0.1", port, path: "/version", ca: cert }, (res) => {
          const peer = String((res.socket as TLSSocket).getPeerCertificate().subject.CN);
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (c: string) => {
            text += c;
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text, peer }));
        });
        req.on("error", reject);
        req.end();
      });
      expect(body.status).toBe(200);
      expect(body.peer).toBe("localhost");
      expect(JSON.parse(body.text)).toMatchObject({ vllm_version: "0.0.0-test" });
    } finally {
      await app.close();
    }
  });
});
