// The models this server answers for: the base model under its served name and the LoRA adapters of
// `--lora-modules`, as vLLM's `OpenAIServingModels` (vllm/entrypoints/openai/models/serving.py) keeps them:
// adapters loaded on the engines at start (`init_static_loras` → `add_lora`), ids 1, 2, … in the order given
// (`lora_id_counter`), each listed in /v1/models as a card whose parent is the base model, and a request
// whose `model` names an adapter carries that adapter's LoRARequest to the engine.
import type { CallRequest } from "@vllm-engine-core/client";
import { randomId } from "./context.js";
import { InvalidLoraModuleError, OpenAIApiError } from "./errors.js";

export type LoraRequest = NonNullable<CallRequest["loraRequest"]>;

/** vLLM's `LoRAModulePath` (vllm/entrypoints/openai/models/protocol.py). */
export interface LoraModule {
  name: string;
  path: string;
  baseModelName?: string | null;
  is3dLoraWeight?: boolean;
}

const LORA_MODULE_KEYS = new Set(["name", "path", "base_model_name", "is_3d_lora_weight"]);

/**
 * `--lora-modules` values as vLLM's `LoRAParserAction` (vllm/entrypoints/openai/cli_args.py) reads them:
 * `name=path` (an item with "=" and no ","), else a JSON object `{"name", "path", "base_model_name",
 * "is_3d_lora_weight"}`; empty items are skipped.
 */
export function parseLoraModules(values: readonly string[]): LoraModule[] {
  const out: LoraModule[] = [];
  for (const item of values) {
    if (item === "") continue;
    if (item.includes("=") && !item.includes(",")) {
      const parts = item.split("=");
      if (parts.length !== 2) {
        throw new InvalidLoraModuleError(item, "give one `name=path` (a single '=') or a JSON object");
      }
      out.push({ name: parts[0]!, path: parts[1]! });
      continue;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(item);
    } catch {
      throw new InvalidLoraModuleError(item, "Invalid JSON format for --lora-modules");
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      throw new InvalidLoraModuleError(item, "Invalid fields for --lora-modules: expected a JSON object");
    }
    const obj = parsed as Record<string, unknown>;
    const unknown = Object.keys(obj).filter((k) => !LORA_MODULE_KEYS.has(k));
    if (unknown.length > 0) {
      throw new InvalidLoraModuleError(
        item,
        `Invalid fields for --lora-modules: unexpected ${unknown.join(", ")}`,
      );
    }
    if (typeof obj.name !== "string" || typeof obj.path !== "string") {
      throw new InvalidLoraModuleError(
        item,
        "Invalid fields for --lora-modules: `name` and `path` are required strings",
      );
    }
    out.push({
      name: obj.name,
      path: obj.path,
      ...(typeof obj.base_model_name === "string" ? { baseModelName: obj.base_model_name } : {}),
      ...(obj.is_3d_lora_weight === true ? { is3dLoraWeight: true } : {}),
    });
  }
  return out;
}

/** vLLM's `ModelPermission` with its defaults (vllm/entrypoints/openai/engine/protocol.py). */
function modelPermission(created: number) {
  return {
    id: `modelperm-${randomId()}`,
    object: "model_permission",
    created,
    allow_create_engine: false,
    allow_sampling: true,
    allow_logprobs: true,
    allow_search_indices: false,
    allow_view: true,
    allow_fine_tuning: false,
    organization: "*",
    group: null,
    is_blocking: false,
  };
}

export interface ModelTarget {
  /** The `model` of the response: the adapter's name, or the served name. */
  name: string;
  loraRequest: LoraRequest | null;
}

export class ServedModels {
  readonly #loras = new Map<string, LoraRequest>();

  constructor(
    readonly servedModelName: string,
    readonly modelPath: string,
    readonly maxModelLen: number,
  ) {}

  /** Registers the adapters with ids 1, 2, … (vLLM's counter) and returns the LoRARequests to load. */
  addLoras(modules: readonly LoraModule[]): LoraRequest[] {
    const added: LoraRequest[] = [];
    for (const m of modules) {
      const existing = this.#loras.get(m.name);
      const request: LoraRequest = {
        loraName: m.name,
        loraIntId: existing?.loraIntId ?? this.#loras.size + 1,
        loraPath: m.path,
        // vLLM keeps base_model_name only when it names a served base model.
        ...(m.baseModelName === this.servedModelName ? { baseModelName: m.baseModelName } : {}),
        ...(m.is3dLoraWeight ? { is3dLoraWeight: true } : {}),
      };
      this.#loras.set(m.name, request);
      added.push(request);
    }
    return added;
  }

  /** vLLM's `_check_model` + `_maybe_get_adapters`: no model or the served name → base; an adapter → it. */
  resolve(model: unknown): ModelTarget {
    if (model === undefined || model === null || model === "" || model === this.servedModelName) {
      return { name: this.servedModelName, loraRequest: null };
    }
    const lora = typeof model === "string" ? this.#loras.get(model) : undefined;
    if (lora) return { name: lora.loraName, loraRequest: lora };
    throw new OpenAIApiError(404, "NotFoundError", `The model \`${String(model)}\` does not exist.`, "model");
  }

  /** GET /v1/models: the base model's card, then one per adapter (`show_available_models`). */
  list() {
    const created = Math.floor(Date.now() / 1000);
    const base = {
      id: this.servedModelName,
      object: "model",
      created,
      owned_by: "vllm",
      root: this.modelPath,
      parent: null,
      max_model_len: this.maxModelLen,
      permission: [modelPermission(created)],
    };
    const loras = [...this.#loras.values()].map((lora) => ({
      id: lora.loraName,
      object: "model",
      created,
      owned_by: "vllm",
      root: lora.loraPath ?? null,
      parent: lora.baseModelName ?? this.servedModelName,
      max_model_len: null,
      permission: [modelPermission(created)],
    }));
    return { object: "list", data: [base, ...loras] };
  }
}
