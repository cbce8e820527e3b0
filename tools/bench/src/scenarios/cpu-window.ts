// CPU use of the engine process and of this process's threads over a measurement window.
import { type CpuSample, cpuAvailable, cpuBetween, sampleCpu } from "../cpu.js";
import { labelThreads } from "../threads.js";
import type { CpuReport } from "../types.js";

/** CPU sampling between two instants for the engine process and this process's threads. */
export class CpuWindow {
  #start: CpuSample | undefined;
  report: CpuReport | undefined;

  constructor(
    readonly enginePid: number,
    readonly frontendPid: number,
    readonly labels: Map<number, string> = new Map(),
  ) {}

  start(): void {
    if (cpuAvailable()) this.#start = sampleCpu([this.enginePid, this.frontendPid]);
  }

  stop(): CpuReport | undefined {
    if (this.#start === undefined) return undefined;
    const d = cpuBetween(this.#start, sampleCpu([this.enginePid, this.frontendPid]));
    const ownThreads = this.frontendPid === process.pid;
    const threads = ownThreads
      ? [...d.threads]
          .map(([tid, cpu]) => ({ tid, cpu, label: this.labels.get(tid) ?? "other thread" }))
          .filter((t) => t.cpu >= 0.02 || this.labels.has(t.tid))
          .sort((a, b) => b.cpu - a.cpu)
      : [];
    this.report = {
      engine: d.processes.get(this.enginePid),
      frontend: d.processes.get(this.frontendPid),
      threads,
    };
    return this.report;
  }
}

export { labelThreads };
