// The probe's own messages between its main thread and its consumer worker (the third thread), on top
// of the attach / close / marker ones every consumer worker shares (consumer/protocol.ts).
export type ToConsumer =
  | { type: "start"; count: number; maxTokens: number; prefix: string; tokensPerStep: number }
  | { type: "stop" };

export type FromConsumer = { type: "flowing" } | { type: "stopped"; pairs: Float64Array; merged: number };
