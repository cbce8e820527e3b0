#!/usr/bin/env node
// `vllm-engine-core`: runs the command line and exits with its code. The process ends by itself once everything
// it started is closed (calling process.exit() while the client's runtime thread is still winding down costs
// about 2 s at exit); the unref'd timer only forces the exit if a library left a handle open.
import { main } from "./main.js";

const FORCED_EXIT_MS = 5_000;

const code = await main(process.argv.slice(2));
process.exitCode = code;
setTimeout(() => process.exit(code), FORCED_EXIT_MS).unref();
