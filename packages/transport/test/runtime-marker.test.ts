// The mark this package's guard checks must be the one the runtime's host writes into its worker's
// workerData: each package keeps its own copy, because the runtime's host side must not load the transport.
import { describe, expect, it } from "vitest";
import {
  RUNTIME_WORKER_MARKER as HOST_MARKER,
  RUNTIME_WORKER_MARKER_VALUE as HOST_MARKER_VALUE,
} from "../../runtime/src/runtime-marker.ts";
import { RUNTIME_WORKER_MARKER, RUNTIME_WORKER_MARKER_VALUE } from "../src/guard.ts";

describe("runtime worker marker", () => {
  it("is the one the runtime's host writes", () => {
    expect([RUNTIME_WORKER_MARKER, RUNTIME_WORKER_MARKER_VALUE]).toEqual([HOST_MARKER, HOST_MARKER_VALUE]);
  });
});
