import { afterEach } from "vitest";

type Cleanup = () => unknown;

/** Registers an afterEach that runs the deferred cleanups of each test in reverse order. */
export function useCleanups(): (cleanup: Cleanup) => void {
  const cleanups: Cleanup[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return (cleanup) => {
    cleanups.push(cleanup);
  };
}
