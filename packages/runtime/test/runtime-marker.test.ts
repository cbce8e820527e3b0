// The runtime worker's workerData mark (written by the host) must be the one the bundled transport's guard
// checks: each package keeps its own copy, because the host side must not load the transport.
import { describe, expect, it } from "vitest";
import {
  RUNTIME_WORKER_MARKER as TRANSPORT_MARKER,
  RUNTIME_WORKER_MARKER_VALUE as TRANSPORT_MARKER_VALUE,
} from "../../transport/src/guard.ts";
import { RUNTIME_WORKER_MARKER, RUNTIME_WORKER_MARKER_VALUE } from "../src/runtime-marker.ts";

describe("runtime worker marker", () => {
  it("is the one the transport's guard checks", () => {
    expect([RUNTIME_WORKER_MARKER, RUNTIME_WORKER_MARKER_VALUE]).toEqual([
      TRANSPORT_MARKER,
      TRANSPORT_MARKER_VALUE,
    ]);
  });
});
