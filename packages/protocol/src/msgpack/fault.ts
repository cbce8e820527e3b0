// Internal error raised while encoding/decoding. It collects the field path while the stack unwinds
// (each struct/array level prepends its segment), and the public entry points turn it into a
// ProtocolError. Never exported from the package.
// Deliberately not an Error subclass: capturing a stack trace costs microseconds, and decoders of
// hostile input may raise many of these.
export class WireFault {
  readonly path: string[] = [];
  constructor(readonly detail: string) {}
}

export function fail(detail: string): never {
  throw new WireFault(detail);
}

/** Prepend a path segment to a fault; any other error (a bug, a stack overflow) becomes a fault too. */
export function withSegment(err: unknown, segment: string): WireFault {
  const fault = err instanceof WireFault ? err : new WireFault(describeForeign(err));
  fault.path.unshift(segment);
  return fault;
}

export function describeForeign(err: unknown): string {
  if (err instanceof RangeError && /call stack/i.test(err.message)) return "value nested too deeply";
  if (err instanceof Error) return `unexpected ${err.name}: ${err.message}`;
  return `unexpected failure: ${String(err)}`;
}
