// Profiles the threads of this process over a measurement window (see thread-profiler.ts) and writes
// the profiles of the threads that do the work next to their summaries.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ProfileSummary, summarizeProfile, threadOf } from "../profile.js";
import { ThreadProfiler } from "../thread-profiler.js";

export class WindowProfile {
  #started: Promise<ThreadProfiler> | undefined;
  #stopped: Promise<ProfileSummary[]> | undefined;

  /** `mainLabel`: name of this thread when it does the work (the ceiling), or undefined to leave it out. */
  constructor(
    readonly dir: string,
    readonly prefix: string,
    readonly mainLabel: string | undefined,
  ) {}

  start(): void {
    this.#started ??= ThreadProfiler.start();
  }

  stop(): void {
    if (this.#started === undefined || this.#stopped !== undefined) return;
    this.#stopped = this.#started.then(async (profiler) => {
      mkdirSync(this.dir, { recursive: true });
      const summaries: ProfileSummary[] = [];
      for (const { title, profile } of await profiler.stop()) {
        const thread = title === "main" ? this.mainLabel : threadOf(profile);
        if (thread === undefined || thread === "other") continue;
        const file = join(this.dir, `${this.prefix}-${thread.replace(/ /g, "-")}.cpuprofile`);
        writeFileSync(file, JSON.stringify(profile));
        summaries.push(summarizeProfile(profile, file, 15, thread));
      }
      return summaries;
    });
  }

  result(): Promise<ProfileSummary[] | undefined> {
    return this.#stopped ?? Promise.resolve(undefined);
  }
}
