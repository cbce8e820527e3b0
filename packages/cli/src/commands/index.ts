// Every command, in --help order. (`serve` runs @vllm-engine-core/server, `metrics` @vllm-engine-core/metrics.)
import type { Command } from "../command.js";
import { benchCommand } from "./bench.js";
import { generateCommand } from "./generate.js";
import { infoCommand } from "./info.js";
import { metricsCommand } from "./metrics.js";
import { mockEngineCommand } from "./mock-engine.js";
import { serveCommand } from "./serve.js";
import { shortcutCommands, utilityCommand } from "./utility.js";

export const COMMANDS: readonly Command[] = [
  infoCommand,
  generateCommand,
  serveCommand,
  utilityCommand,
  ...shortcutCommands,
  benchCommand,
  metricsCommand,
  mockEngineCommand,
];
