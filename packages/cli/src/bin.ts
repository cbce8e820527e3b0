#!/usr/bin/env node
// `vllm-engine-core`: runs the command line and exits with its code. The explicit exit ends the process once
// everything it started is closed, even if a library left a timer behind (stdout/stderr writes to pipes and
// files are synchronous on Linux, so nothing printed is lost).
import { main } from "./main.js";

process.exit(await main(process.argv.slice(2)));
