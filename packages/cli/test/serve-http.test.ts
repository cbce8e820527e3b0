// `serve`'s HTTP flags → server options, without starting anything: vLLM's spellings and fallbacks
// (VLLM_API_KEY, JSON lists for CORS, nargs for --api-key / --lora-modules) and the usage errors.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseLoraModules } from "@vllm-engine-core/server";
import { describe, expect, it } from "vitest";
import { parseCommandArgs } from "../src/args.js";
import { serveCommand } from "../src/commands/serve.js";
import { httpOptions } from "../src/commands/serve-http.js";

const parse = (argv: string[]) => parseCommandArgs(serveCommand.spec, argv);
const options = (argv: string[], env: NodeJS.ProcessEnv = {}) =>
  httpOptions(parse(argv), "serve", env, parseLoraModules);

describe("serve's HTTP flags", () => {
  it("--api-key takes several values after one flag or repeated; else $VLLM_API_KEY; empty keys dropped", () => {
    expect(options(["--api-key", "a", "b", "--mock"]).apiKeys).toEqual(["a", "b"]);
    expect(options(["--api-key", "a", "--api-key", "b"]).apiKeys).toEqual(["a", "b"]);
    expect(options(["--api-key", "a"], { VLLM_API_KEY: "env" }).apiKeys).toEqual(["a"]);
    expect(options([], { VLLM_API_KEY: "env" }).apiKeys).toEqual(["env"]);
    expect(options([], { VLLM_API_KEY: "" }).apiKeys).toEqual([]);
    expect(options([]).apiKeys).toEqual([]);
  });

  it("CORS lists are JSON (vLLM's json.loads); defaults left to the server", () => {
    expect(options([]).cors).toEqual({ allowCredentials: false });
    expect(
      options(["--allowed-origins", '["https://a"]', "--allowed-methods", '["GET"]', "--allow-credentials"])
        .cors,
    ).toEqual({ allowedOrigins: ["https://a"], allowedMethods: ["GET"], allowCredentials: true });
    expect(() => options(["--allowed-origins", "https://a"])).toThrow(/--allowed-origins needs a JSON list/);
    expect(() => options(["--allowed-headers", '"x"'])).toThrow(
      /--allowed-headers needs a JSON list of strings/,
    );
  });

  it("--stream-interval: an integer of at least 1, else a usage error; unset leaves the server's default", () => {
    expect(options(["--stream-interval", "8"]).streamInterval).toBe(8);
    expect(options([]).streamInterval).toBeUndefined();
    for (const bad of ["0", "1.5", "x"]) {
      expect(() => options(["--stream-interval", bad])).toThrow(/--stream-interval/);
    }
  });

  it("--lora-modules: both vLLM forms, several after one flag; a bad one is a usage error", () => {
    expect(options(["--lora-modules", "a=/p/a", '{"name": "b", "path": "/p/b"}']).loraModules).toEqual([
      { name: "a", path: "/p/a" },
      { name: "b", path: "/p/b" },
    ]);
    expect(() => options(["--lora-modules", "{oops"])).toThrow(/Invalid JSON format for --lora-modules/);
  });

  it("TLS: key and certificate read from files, both needed; client-certificate modes", () => {
    const dir = mkdtempSync(join(tmpdir(), "vec-cli-tls-"));
    try {
      writeFileSync(join(dir, "k.pem"), "KEY");
      writeFileSync(join(dir, "c.pem"), "CERT");
      writeFileSync(join(dir, "ca.pem"), "CA");
      const files = ["--ssl-keyfile", join(dir, "k.pem"), "--ssl-certfile", join(dir, "c.pem")];
      expect(options(files).https).toEqual({ key: Buffer.from("KEY"), cert: Buffer.from("CERT") });
      expect(
        options([...files, "--ssl-ca-certs", join(dir, "ca.pem"), "--ssl-cert-reqs", "2"]).https,
      ).toEqual({
        key: Buffer.from("KEY"),
        cert: Buffer.from("CERT"),
        ca: Buffer.from("CA"),
        requestCert: true,
        rejectUnauthorized: true,
      });
      expect(() => options(["--ssl-keyfile", join(dir, "k.pem")])).toThrow(
        /needs both --ssl-keyfile and --ssl-certfile/,
      );
      expect(() =>
        options(["--ssl-keyfile", join(dir, "none"), "--ssl-certfile", join(dir, "c.pem")]),
      ).toThrow(/--ssl-keyfile .*none: ENOENT/);
      expect(() => options([...files, "--ssl-cert-reqs", "3"])).toThrow(
        /--ssl-cert-reqs needs an integer in \[0, 2\]/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the flags that take no list: request id headers, root path, token ids", () => {
    const o = options(["--enable-request-id-headers", "--root-path", "/api", "--return-tokens-as-token-ids"]);
    expect([o.enableRequestIdHeaders, o.rootPath, o.returnTokensAsTokenIds]).toEqual([true, "/api", true]);
  });
});
