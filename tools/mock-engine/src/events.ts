// The child's JSON-lines event log (stdout). One event per line. process.stdout writes to a pipe or file
// synchronously on Linux, so the last events before an abrupt exit (crash fault) are not lost in a buffer.

export type MockEngineEventName =
  | "started"
  | "hello"
  | "init"
  | "registered"
  | "ready"
  | "coordinator-ready"
  | "coordinator-message"
  | "coordinator-counts"
  | "add"
  | "abort"
  | "utility"
  | "step"
  | "finished"
  | "fault"
  | "rejected"
  | "exit";

export type MockEngineEvent = {
  event: MockEngineEventName;
  engineIndex?: number;
  requestId?: string;
  requestIds?: string[];
  method?: string;
  [k: string]: unknown;
};

function replacer(_key: string, value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString("hex");
  return value;
}

export function logEvent(event: MockEngineEvent): void {
  const line = `${JSON.stringify({ ...event, ts: Date.now() }, replacer)}\n`;
  try {
    process.stdout.write(line);
  } catch {
    // stdout gone (parent died): nothing to report to
  }
}
