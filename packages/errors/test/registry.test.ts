// The thread crossing of the error family: a class registers itself by code when its module loads, and
// deserializeError rebuilds it by that code, with no list kept by hand.
import { describe, expect, it } from "vitest";
import {
  ClientClosedError,
  deserializeError,
  EngineDeadError,
  errorClassFor,
  registerErrorClass,
  serializeError,
  TransportUsageError,
  VllmEngineCoreError,
} from "../src/index.js";

/** An error defined outside this package, the way every package defines its own. */
class PluginError extends VllmEngineCoreError {
  override readonly name = "PluginError";
  static readonly code = "TEST_PLUGIN" as const;
  readonly code = PluginError.code;
  static {
    registerErrorClass(PluginError);
  }
  readonly detail: string;
  constructor(detail: string) {
    super(`The plugin failed: ${detail}. Fix the plugin.`);
    this.detail = detail;
  }
}

const cross = (err: unknown) => deserializeError(structuredClone(serializeError(err)));

describe("error registry", () => {
  it("a class registers itself when its module loads and crosses as itself", () => {
    expect(errorClassFor("TEST_PLUGIN")).toBe(PluginError);
    const back = cross(new PluginError("x"));
    expect(back).toBeInstanceOf(PluginError);
    expect(back).toMatchObject({ name: "PluginError", code: "TEST_PLUGIN", detail: "x" });
  });

  it("the package's classes are registered by their code", () => {
    expect(errorClassFor("ENGINE_DEAD")).toBe(EngineDeadError);
    expect(errorClassFor("CLIENT_CLOSED")).toBe(ClientClosedError);
    // The transport's error crosses as its class (it used to arrive as a plain Error).
    const back = cross(new TransportUsageError({ detail: "second output loop" }));
    expect(back).toBeInstanceOf(TransportUsageError);
    expect(back).toMatchObject({ code: "TRANSPORT_USAGE", detail: "second output loop" });
  });

  it("looks up by code, not by name", () => {
    const wire = structuredClone(serializeError(new EngineDeadError({ engineIndex: 0, reason: "gone" })));
    wire.__vllmError = "RenamedError";
    const back = deserializeError(wire);
    expect(back).toBeInstanceOf(EngineDeadError);
    expect(back.name).toBe("RenamedError");
  });

  it("an unknown code or a plain error comes back as a plain Error with its name and message", () => {
    const unknown = deserializeError({
      __vllmError: "SomethingNew",
      message: "m",
      stack: undefined,
      data: { code: "NOT_REGISTERED" },
    });
    expect(unknown).not.toBeInstanceOf(VllmEngineCoreError);
    expect(unknown).toMatchObject({ name: "SomethingNew", message: "m" });
    expect(cross(new RangeError("r"))).toMatchObject({ name: "RangeError", message: "r" });
  });

  it("one registry per process, shared by every copy of the package", () => {
    const key = Symbol.for("vllm-engine-core.errors.registry.v1");
    const shared = (globalThis as Record<symbol, Map<string, unknown>>)[key];
    expect(shared?.get("TEST_PLUGIN")).toBe(PluginError);
  });
});
