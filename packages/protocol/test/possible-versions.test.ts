// possibleVersions(registration): which vLLM versions an engine can be, read from each tag's real
// registration vector (test/vectors/versions) and from the release candidates that were cut from main.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type EngineCoreReadyResponse, possibleVersions, type VllmVersion } from "../src/index.js";
import { decodersFor, FRAME_SHAPES } from "./helpers/frame-shapes.js";

const { decodeReadyResponse } = decodersFor(FRAME_SHAPES);
const DIR = join(import.meta.dirname, "vectors", "versions");
const registrations = new Map<VllmVersion, EngineCoreReadyResponse>();
for (const file of readdirSync(DIR).filter((f) => f.endsWith(".json"))) {
  const doc = JSON.parse(readFileSync(join(DIR, file), "utf8")) as {
    vectors: { name: string; version: VllmVersion; frames_hex: string[] }[];
  };
  const v = doc.vectors.find((x) => x.name === "registration.typical")!;
  registrations.set(v.version, decodeReadyResponse(new Uint8Array(Buffer.from(v.frames_hex[0]!, "hex"))));
}
const at = (v: VllmVersion, patch: Partial<EngineCoreReadyResponse> = {}) =>
  ({ ...registrations.get(v)!, ...patch }) as EngineCoreReadyResponse;

describe("possibleVersions", () => {
  it("each final release's registration is that release; a development build is main or later", () => {
    expect(possibleVersions(at("0.22"))).toEqual(["0.22"]);
    expect(possibleVersions(at("0.23"))).toEqual(["0.23"]);
    expect(possibleVersions(at("0.24"))).toEqual(["0.24"]);
    expect(possibleVersions(at("0.25"))).toEqual(["0.25"]);
    expect(at("main").vllmVersion).toBe("0.26.0.dev0");
    expect(possibleVersions(at("main"))).toEqual(["main", "next"]);
    expect(possibleVersions(at("next"))).toEqual(["main", "next"]);
    // v0.24 and v0.25 register the same keys: a string that names no release leaves both open.
    expect(possibleVersions(at("0.25", { vllmVersion: "0.25.2.dev7+g1234abc" }))).toEqual([
      "0.24",
      "0.25",
      "main",
      "next",
    ]);
    expect(possibleVersions(at("0.25", { vllmVersion: "0.26.0" }))).toEqual(["0.24", "0.25", "main", "next"]);
  });

  it("a release candidate is believed only when its keys agree", () => {
    expect(possibleVersions(at("0.24", { vllmVersion: "0.24.0rc1" }))).toEqual(["0.24"]);
    // v0.23.1rc0 (cut from main on 2026-06-15): v0.23's keys plus the KV cache capacity.
    const rc = {
      ...at("0.23", { vllmVersion: "0.23.1rc0" }),
      kvCacheSizeTokens: 1,
      kvCacheMaxConcurrency: 1,
    };
    expect(possibleVersions(rc)).toEqual(["0.24", "0.25", "main", "next"]);
    // v0.22.1rc0 (cut from main on 2026-05-29): v0.22's keys plus vllm_version.
    expect(possibleVersions(at("0.22", { vllmVersion: "0.22.1rc0" }))).toEqual([
      "0.23",
      "0.24",
      "0.25",
      "main",
      "next",
    ]);
  });

  it("a final release string is believed even when the keys are newer (a patched or mock engine)", () => {
    expect(possibleVersions(at("main", { vllmVersion: "0.23.0" }))).toEqual(["0.23"]);
  });
});
