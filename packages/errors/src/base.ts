// Base class of every public error of the project, on every thread. A subclass declares a stable `name`, a
// static `code` (its instance `code` is the same), keeps its typed details as own enumerable properties
// (what crosses a thread, see registry.ts) and registers itself by code when its module loads:
//
//   export class EngineDeadError extends VllmEngineCoreError {
//     override readonly name = "EngineDeadError";
//     static readonly code = "ENGINE_DEAD" as const;
//     readonly code = EngineDeadError.code;
//     static {
//       registerErrorClass(EngineDeadError); // after `code`: static members initialise in order
//     }
//     ...
export abstract class VllmEngineCoreError extends Error {
  abstract readonly code: string;

  /** `code` and the typed details of this error (everything except name/message/stack). */
  toData(): Record<string, unknown> {
    const data: Record<string, unknown> = {};
    for (const key of Object.keys(this)) {
      if (key === "name" || key === "message" || key === "stack") continue;
      data[key] = (this as unknown as Record<string, unknown>)[key];
    }
    return data;
  }
}
