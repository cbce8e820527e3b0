#!/usr/bin/env node
// The package's bin is this committed file, not dist/main.js: pnpm links bins at install time, before a
// fresh clone has built dist/, and warned "Failed to create bin" for every dependent package.
await import("../dist/main.js");
