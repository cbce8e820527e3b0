import { randomUUID } from "node:crypto";

/** A random id for runtime generations, thread links and rendezvous nonces. */
export function newId(): string {
  return randomUUID();
}
