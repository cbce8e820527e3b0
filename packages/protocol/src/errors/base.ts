// Base class of every public error shared across layers and threads. Subclasses declare a stable `name`
// and `code` and keep their structured fields as own enumerable properties, which is what
// `serializeError` copies and `deserializeError` restores (see serialize.ts).
export abstract class VllmEngineCoreError extends Error {
  abstract readonly code: string;

  /** `code` and the structured fields of this error (everything except name/message/stack). */
  toData(): Record<string, unknown> {
    const data: Record<string, unknown> = {};
    for (const key of Object.keys(this)) {
      if (key === "name" || key === "message" || key === "stack") continue;
      data[key] = (this as unknown as Record<string, unknown>)[key];
    }
    return data;
  }
}
