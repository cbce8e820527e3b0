// The machine a measurement ran on, for results files.
import { cpus, release, totalmem, type } from "node:os";

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  node: string;
  os: string;
  memoryGiB: number;
}

export function machineInfo(): MachineInfo {
  const list = cpus();
  return {
    cpuModel: list[0]?.model.trim() ?? "unknown",
    cores: list.length,
    node: process.version,
    os: `${type()} ${release()} ${process.arch}`,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
  };
}
