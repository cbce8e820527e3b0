// The per-version vectors are real msgspec output (scripts/gen-version-vectors.py builds each tag's
// structs as msgspec/dataclass/NamedTuple classes and encodes with msgspec.msgpack): every file and
// vector says which msgspec encoded it, and what the tag's own EngineCoreRequest did with fields it
// does not declare (the basis for sending stream_interval / session_id to older engines).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

interface VersionFile {
  about: {
    version: string;
    real_msgspec: boolean;
    encoded_by: string;
    msgspec_check: { identical: string[] };
    unknown_request_fields: Record<string, string>;
  };
  vectors: { name: string; provenance: { encoded_by: string; how: string } }[];
}

const DIR = join(import.meta.dirname, "vectors", "versions");
const FILES = readdirSync(DIR)
  .filter((f) => f.endsWith(".json"))
  .map((f) => [f, JSON.parse(readFileSync(join(DIR, f), "utf8")) as VersionFile] as const);

describe("per-version vectors: provenance", () => {
  it.each(FILES)("%s was encoded by real msgspec", (_file, doc) => {
    expect(doc.about.real_msgspec).toBe(true);
    expect(doc.about.encoded_by).toMatch(/^msgspec \d+\.\d+\.\d+$/);
    // The rebuilt pin classes reproduce every real-msgspec vector of vectors.json.
    expect(doc.about.msgspec_check.identical.length).toBeGreaterThanOrEqual(26);
    for (const v of doc.vectors) {
      expect(v.provenance.encoded_by, v.name).toBe(doc.about.encoded_by);
      expect(v.provenance.how, v.name).toContain(`encoded by ${doc.about.encoded_by}`);
    }
    // At v0.22–v0.25 the key is stream_interval itself, which those SamplingParams do not declare.
    const facts = Object.entries(doc.about.unknown_request_fields);
    expect(facts).toHaveLength(2);
    for (const [what, verdict] of facts) expect(verdict, what).toMatch(/^decoded \(the extra is ignored\)/);
  });
});
