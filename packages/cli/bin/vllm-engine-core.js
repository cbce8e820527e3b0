#!/usr/bin/env node
// The package's bin is this committed file, not dist/bin.js: a package manager links bins at install
// time, before a workspace build has produced dist/, and would warn that it cannot create the link.
await import("../dist/bin.js");
