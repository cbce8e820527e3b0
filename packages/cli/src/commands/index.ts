// Every command, in --help order. (`metrics` follows once the metrics package exists; `serve` runs @vllm-engine-core/server.)
import type { Command } from "../command.js";
import { benchCommand } from "./bench.js";
import { generateCommand } from "./generate.js";
import { infoCommand } from "./info.js";
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
  mockEngineCommand,
];
