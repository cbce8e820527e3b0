// What every real-engine tier file starts with: the vLLM to run (tools/real-engine/src/kit.ts), found once
// per file, and test titles that say why they were skipped when there is none.
import type { EngineCoreOutput } from "@vllm-engine-core/client";
import { realEngineKit } from "../../src/index.ts";

const lookup = await realEngineKit();

/** The kit, or null when no vLLM can be found or set up here (every tier `describe` then skips). */
export const kit = lookup.ready ? lookup.kit : null;

/** `name`, or `name — skipped: <why>` when there is no kit: the skip says why in one line. */
export const title = (name: string): string =>
  kit ? name : `${name} — skipped: ${lookup.ready ? "" : lookup.reason}`;

/** A stream read to its end: every output, the token ids in order, and the last output's finish reason. */
export interface Collected {
  readonly outputs: EngineCoreOutput[];
  readonly tokenIds: number[];
  readonly finishReason: number | null;
}

export async function collect(stream: AsyncIterable<EngineCoreOutput>): Promise<Collected> {
  const outputs: EngineCoreOutput[] = [];
  for await (const output of stream) outputs.push(output);
  return {
    outputs,
    tokenIds: outputs.flatMap((o) => o.newTokenIds),
    finishReason: outputs.at(-1)?.finishReason ?? null,
  };
}
