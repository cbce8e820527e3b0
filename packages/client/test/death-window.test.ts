// Every request settles around an engine's death, whatever the state of the death's detection: a call made
// before the disconnect is seen, during the vanish grace (the connection dropped, the death not reported
// yet) and after it. Before the fix, a call made in the grace hung forever: the input ROUTER (MANDATORY)
// had no writable pipe left, so zeromq.js waited for writability that never came, and every later send on
// that socket (utility calls, aborts) queued behind it.
import { setTimeout as sleep } from "node:timers/promises";
import { EngineDeadError } from "@vllm-engine-core/errors";
import { afterEach, describe, expect, it } from "vitest";
import { chatRequest, connectToMockEngine, type Harness } from "./helpers.js";

/** Generous: a settled call fails within the 50 ms grace plus a few ms; a hung one never does. */
const SETTLE_BOUND_MS = 5_000;

type Outcome = { ok: true } | { ok: false; error: unknown } | "hung";

/** How `work` ended, or "hung" when it did not within the bound. */
async function outcomeOf(work: Promise<unknown>, boundMs = SETTLE_BOUND_MS): Promise<Outcome> {
  const controller = new AbortController();
  const hung = sleep(boundMs, "hung" as const, { signal: controller.signal }).catch(() => "hung" as const);
  try {
    return await Promise.race([
      work.then(
        (): Outcome => ({ ok: true }),
        (error: unknown): Outcome => ({ ok: false, error }),
      ),
      hung,
    ]);
  } finally {
    controller.abort();
  }
}

/** A generation request through to its end (the stream's last output or its failure). */
async function generate(harness: Harness, requestId: string): Promise<void> {
  const stream = await harness.client.call(chatRequest(requestId, 50));
  for await (const _ of stream);
}

function expectEngineDead(outcome: Outcome): void {
  expect(outcome).not.toBe("hung");
  expect(outcome).toMatchObject({ ok: false });
  expect((outcome as { error: unknown }).error).toBeInstanceOf(EngineDeadError);
}

describe("requests around an engine's death settle", () => {
  let harness: Harness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  for (const offsetMs of [0, 5, 10, 20, 40, 60, 100]) {
    it(`a call ${offsetMs} ms after SIGKILL fails with EngineDeadError`, async () => {
      harness = await connectToMockEngine();
      harness.engine.kill("SIGKILL");
      // The offset is the point of the test: it places the call before, in or after the vanish grace.
      if (offsetMs > 0) await sleep(offsetMs);
      expectEngineDead(await outcomeOf(generate(harness, `at-${offsetMs}`)));
    });
  }

  it("five concurrent calls right after SIGKILL all fail with EngineDeadError", async () => {
    harness = await connectToMockEngine();
    harness.engine.kill("SIGKILL");
    const h = harness;
    const outcomes = await Promise.all(
      Array.from({ length: 5 }, (_, i) => outcomeOf(generate(h, `burst-${i}`))),
    );
    for (const outcome of outcomes) expectEngineDead(outcome);
  });

  it("a stream running when the engine is killed fails with EngineDeadError", async () => {
    harness = await connectToMockEngine({ stepMs: 5 });
    const stream = await harness.client.call(chatRequest("running", 1_000_000));
    await stream.next(); // the engine is serving it
    const ending = (async () => {
      for await (const _ of stream);
    })();
    harness.engine.kill("SIGKILL");
    expectEngineDead(await outcomeOf(ending));
  });

  describe("inside a long vanish grace (the disconnect is seen, the death not reported yet)", () => {
    // 2 s of grace: a call 300 ms after the kill is certainly after the disconnect and before the report.
    const grace = { vanishGraceMs: 2_000 };

    async function killedAndInGrace(): Promise<Harness> {
      const h = await connectToMockEngine({}, {}, grace);
      const exited = new Promise<void>((resolve) => h.engine.exited.then(() => resolve()));
      h.engine.kill("SIGKILL");
      await exited;
      await sleep(300); // past the disconnect notification (a few ms after the exit)
      expect(h.client.healthError).toBeUndefined(); // still inside the grace
      return h;
    }

    it("call, utility call and abort settle; the health error follows after the grace", async () => {
      harness = await killedAndInGrace();
      const { client } = harness;
      const h = harness;
      const [call, utility, concurrent] = await Promise.all([
        outcomeOf(generate(h, "in-grace")),
        outcomeOf(client.resetPrefixCache()),
        Promise.all(Array.from({ length: 5 }, (_, i) => outcomeOf(generate(h, `in-grace-${i}`)))),
      ]);
      expectEngineDead(call);
      expectEngineDead(utility);
      for (const outcome of concurrent) expectEngineDead(outcome);
      // Nothing live is left to abort on the vanished engine: the abort settles without an error.
      expect(await outcomeOf(client.abort(["in-grace", "unknown"]))).toEqual({ ok: true });
      const health = await new Promise<Error>((resolve) => {
        if (client.healthError !== undefined) resolve(client.healthError);
        else client.onHealthChange(resolve);
      });
      expect(health).toBeInstanceOf(EngineDeadError);
    });

    it("a stream submitted before the kill fails once the grace ends; aborting it meanwhile settles", async () => {
      harness = await connectToMockEngine({ stepMs: 5 }, {}, grace);
      const { client } = harness;
      const kept = await client.call(chatRequest("kept", 1_000_000));
      const aborted = await client.call(chatRequest("aborted", 1_000_000));
      await kept.next();
      const keptEnd = (async () => {
        for await (const _ of kept);
      })();
      const exited = new Promise<void>((resolve) => harness!.engine.exited.then(() => resolve()));
      harness.engine.kill("SIGKILL");
      await exited;
      await sleep(300);
      expect(client.healthError).toBeUndefined();
      // Live on the runtime, its engine vanished: the ABORT cannot be sent, and that is not an error.
      expect(await outcomeOf(client.abort("aborted"))).toEqual({ ok: true });
      const last = await outcomeOf(
        (async () => {
          let final: unknown;
          for await (const output of aborted) final = output;
          return final;
        })(),
      );
      expect(last).toEqual({ ok: true });
      expectEngineDead(await outcomeOf(keptEnd));
    });
  });
});
