import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EngineCoreClient, type EngineCoreOutput } from "@vllm-engine-core/client";
import {
  type MockEngineOptions,
  type MockEngineProcess,
  startMockEngine,
} from "@vllm-engine-core/mock-engine";

export interface Harness {
  client: EngineCoreClient;
  engine: MockEngineProcess;
  close(): Promise<void>;
}

/** The mock engine in a child process and a client connected to it (handshake-owner mode). */
export async function connectToMockEngine(
  options: Partial<MockEngineOptions> & { engineCount?: number } = {},
  modelName = "mock-model",
): Promise<Harness> {
  const handshakeAddress = `ipc://${join(tmpdir(), `vec-metrics-${randomUUID().slice(0, 8)}.sock`)}`;
  const engineCount = options.engineCount ?? 1;
  const engineIndices = Array.from({ length: engineCount }, (_, i) => i);
  const engine = await startMockEngine({ stepMs: 2, ...options, handshakeAddress, engineIndices });
  let client: EngineCoreClient;
  try {
    client = await EngineCoreClient.connect({
      transport: { mode: "handshake-owner", handshakeAddress, engineCount, readyTimeoutMs: 20_000 },
      modelName,
    });
  } catch (error) {
    await engine.stop();
    throw error;
  }
  return {
    client,
    engine,
    async close() {
      await client.shutdown();
      await engine.stop();
    },
  };
}

export async function drain(stream: AsyncIterable<EngineCoreOutput>): Promise<EngineCoreOutput[]> {
  const outputs: EngineCoreOutput[] = [];
  for await (const output of stream) outputs.push(output);
  return outputs;
}

export async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Sample lines of an exposition (a strict reading of the 0.0.4 text format's sample syntax). */
export function samples(text: string): Sample[] {
  const out: Sample[] = [];
  const line = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
  const label = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/y;
  for (const raw of text.split("\n")) {
    if (raw === "" || raw.startsWith("#")) continue;
    const m = line.exec(raw);
    if (m === null) throw new Error(`not a sample line: ${raw}`);
    const labels: Record<string, string> = {};
    if (m[2] !== undefined && m[2] !== "") {
      label.lastIndex = 0;
      while (label.lastIndex < m[2].length) {
        const l = label.exec(m[2]);
        if (l === null) throw new Error(`bad labels in: ${raw}`);
        labels[l[1]!] = l[2]!;
      }
    }
    const value = m[3] === "+Inf" ? Infinity : m[3] === "-Inf" ? -Infinity : Number(m[3]);
    if (Number.isNaN(value) && m[3] !== "NaN") throw new Error(`bad value in: ${raw}`);
    out.push({ name: m[1]!, labels, value });
  }
  return out;
}

/** `# TYPE` lines: metric name → type. */
export function types(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) out.set(m[1]!, m[2]!);
  return out;
}

export interface Family {
  name: string;
  help: string;
  type: "counter" | "gauge" | "histogram" | "summary" | "untyped";
  samples: Sample[];
}

/**
 * A strict reader of the Prometheus text exposition format 0.0.4
 * (https://prometheus.io/docs/instrumenting/exposition_formats/#text-format-details): every line is a
 * HELP, a TYPE or a sample; a family's HELP and TYPE come once, before its samples, which are contiguous;
 * sample names belong to their family (a histogram's `_bucket` / `_sum` / `_count`); label names are
 * valid and unique per sample; values parse as floats; a histogram's buckets per label set have ascending
 * `le`, end with `+Inf`, are cumulative, and the `+Inf` bucket equals `_count`. Throws on any violation.
 */
export function parseExposition(text: string): Family[] {
  if (!text.endsWith("\n")) throw new Error("an exposition ends with a line feed");
  const families: Family[] = [];
  const seen = new Set<string>();
  let current: Family | undefined;
  const open = (name: string): Family => {
    if (current?.name === name) return current;
    if (seen.has(name)) throw new Error(`family ${name} is not contiguous`);
    seen.add(name);
    current = { name, help: "", type: "untyped", samples: [] };
    families.push(current);
    return current;
  };
  for (const raw of text.slice(0, -1).split("\n")) {
    const meta = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(raw);
    if (meta !== null) {
      const family = open(meta[2]!);
      if (family.samples.length > 0) throw new Error(`${meta[1]} of ${family.name} after its samples`);
      if (meta[1] === "HELP") family.help = meta[3]!;
      else {
        if (!["counter", "gauge", "histogram", "summary", "untyped"].includes(meta[3]!)) {
          throw new Error(`bad type ${meta[3]} for ${family.name}`);
        }
        family.type = meta[3] as Family["type"];
      }
      continue;
    }
    if (raw === "" || raw.startsWith("#")) continue; // empty lines and comments are ignored
    const [sample] = samples(`${raw}\n`);
    const family = current;
    if (family === undefined) throw new Error(`sample before any family: ${raw}`);
    const suffix = sample!.name.slice(family.name.length);
    const allowed = family.type === "histogram" ? ["_bucket", "_sum", "_count"] : [""];
    if (!sample!.name.startsWith(family.name) || !allowed.includes(suffix)) {
      throw new Error(`sample ${sample!.name} does not belong to family ${family.name} (${family.type})`);
    }
    family.samples.push(sample!);
  }
  for (const family of families) if (family.type === "histogram") checkHistogram(family);
  return families;
}

function checkHistogram(family: Family): void {
  const groups = new Map<string, { buckets: [number, number][]; count?: number }>();
  for (const s of family.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    let group = groups.get(key);
    if (group === undefined) {
      group = { buckets: [] };
      groups.set(key, group);
    }
    if (s.name.endsWith("_bucket")) {
      if (le === undefined) throw new Error(`${s.name} without le`);
      group.buckets.push([le === "+Inf" ? Infinity : Number(le), s.value]);
    } else if (s.name.endsWith("_count")) group.count = s.value;
  }
  for (const [key, group] of groups) {
    const bounds = group.buckets.map(([le]) => le);
    if (bounds.at(-1) !== Infinity) throw new Error(`${family.name}${key}: no +Inf bucket`);
    for (let i = 1; i < group.buckets.length; i++) {
      if (!(bounds[i]! > bounds[i - 1]!)) throw new Error(`${family.name}${key}: le not ascending`);
      if (group.buckets[i]![1] < group.buckets[i - 1]![1])
        throw new Error(`${family.name}${key}: not cumulative`);
    }
    if (group.count !== group.buckets.at(-1)![1])
      throw new Error(`${family.name}${key}: +Inf bucket != _count`);
  }
}
