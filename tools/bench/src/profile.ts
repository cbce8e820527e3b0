// Summarises V8 .cpuprofile files (inspector or node --cpu-prof): self time per function, hottest first.
//   node dist/profile.js <dir-or-file>... [--top 15]
import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples?: number[];
  timeDeltas?: number[];
  startTime: number;
  endTime: number;
}

export interface HotFunction {
  name: string;
  where: string;
  selfMs: number;
  share: number;
}

export interface ProfileSummary {
  file: string;
  /** Which thread this was, from the scripts it ran ("runtime thread", "consumer thread", or "other"). */
  thread: string;
  totalMs: number;
  /** Sampled time not spent idle (program + GC). */
  busyMs: number;
  top: HotFunction[];
}

function shortUrl(url: string): string {
  if (url === "") return "(native)";
  const path = url.replace(/^file:\/\//, "");
  const i = path.lastIndexOf("/node_modules/");
  if (i >= 0) return path.slice(i + "/node_modules/".length);
  const parts = path.split("/");
  return parts.slice(-3).join("/");
}

export function summarizeProfile(
  profile: CpuProfile,
  file: string,
  top = 15,
  thread?: string,
): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) {
    // timeDeltas[i] is the time before sample i; attribute the following interval to sample i.
    const dt = deltas[i + 1] ?? 0;
    selfUs.set(samples[i]!, (selfUs.get(samples[i]!) ?? 0) + Math.max(0, dt));
  }
  const agg = new Map<string, HotFunction>();
  let total = 0;
  let idle = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    total += us;
    const name = node.callFrame.functionName || "(anonymous)";
    if (name === "(idle)") {
      idle += us;
      continue;
    }
    const where = node.callFrame.url
      ? `${shortUrl(node.callFrame.url)}:${node.callFrame.lineNumber + 1}`
      : "(native)";
    const key = `${name}@${where}`;
    const entry = agg.get(key) ?? { name, where, selfMs: 0, share: 0 };
    entry.selfMs += us / 1000;
    agg.set(key, entry);
  }
  const busyMs = (total - idle) / 1000;
  const list = [...agg.values()].sort((a, b) => b.selfMs - a.selfMs).slice(0, top);
  for (const f of list) f.share = busyMs > 0 ? f.selfMs / busyMs : 0;
  return {
    file: basename(file),
    thread: thread ?? threadOf(profile),
    totalMs: total / 1000,
    busyMs,
    top: list,
  };
}

/** Which thread a profile came from, by the scripts it ran. */
export function threadOf(profile: CpuProfile): string {
  const urls = profile.nodes.map((n) => n.callFrame.url);
  if (urls.some((u) => u.endsWith("/runtime-thread/main.js") && u.includes("runtime")))
    return "runtime thread";
  if (urls.some((u) => u.endsWith("consumer-worker.js"))) return "consumer thread";
  return "other";
}

export function summarizeProfiles(paths: readonly string[], top = 15): ProfileSummary[] {
  const files = paths.flatMap((p) =>
    statSync(p).isDirectory()
      ? readdirSync(p)
          .filter((f) => f.endsWith(".cpuprofile"))
          .sort()
          .map((f) => join(p, f))
      : [p],
  );
  return files.map((f) => summarizeProfile(JSON.parse(readFileSync(f, "utf8")) as CpuProfile, f, top));
}

export function renderProfile(s: ProfileSummary): string {
  const lines = [
    `${s.thread} (${s.file}): ${s.busyMs.toFixed(0)} ms busy of ${s.totalMs.toFixed(0)} ms sampled`,
  ];
  for (const f of s.top) {
    lines.push(
      `  ${(f.share * 100).toFixed(1).padStart(5)}%  ${f.selfMs.toFixed(0).padStart(6)} ms  ${f.name}  ${f.where}`,
    );
  }
  return lines.join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const args = process.argv.slice(2);
  const topIndex = args.indexOf("--top");
  const top = topIndex >= 0 ? Number(args.splice(topIndex, 2)[1]) : 15;
  for (const s of summarizeProfiles(args, top)) console.log(`${renderProfile(s)}\n`);
}
