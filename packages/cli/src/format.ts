// Text helpers shared by the commands: aligned tables and JSON that survives the values engines send
// (msgpack integers beyond 2^53 arrive as bigint, binary as Uint8Array, tensors as typed arrays).

/** A plain-text table: the first row is the header, numbers right-aligned. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? "").length)));
  const numeric = (cell: string) => /^-?[\d.,]+$/.test(cell);
  const render = (r: readonly string[], header: boolean) =>
    r
      .map((cell, c) => (!header && numeric(cell) ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!)))
      .join("  ")
      .trimEnd();
  return [
    render(rows[0]!, true),
    widths.map((w) => "-".repeat(w)).join("  "),
    ...rows.slice(1).map((r) => render(r, false)),
  ].join("\n");
}

function jsonValue(_key: string, value: unknown): unknown {
  if (typeof value === "bigint")
    return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (value instanceof Uint8Array) return Array.from(value);
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
    return Array.from(value as unknown as ArrayLike<number | bigint>, (v) => jsonValue("", v));
  }
  if (value instanceof Map) return Object.fromEntries(value);
  if (value instanceof Set) return [...value];
  return value;
}

/** JSON.stringify that also writes bigints (as numbers when exact), typed arrays, maps and sets. */
export function toJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, jsonValue, indent);
}

export function ms(seconds: number): string {
  return (seconds * 1000).toFixed(1);
}
