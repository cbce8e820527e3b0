// Small shared codecs for the struct tables.
import { fail } from "../msgpack/fault.js";
import { ANY, type Codec, describeValue, INT, list, STR, strMap, union } from "../schema/codec.js";
import { encodeAny } from "../schema/opaque.js";

/** dict[str, Any] (extra_args, kv_transfer_params, ...): a plain object on decode. */
export const STR_ANY_MAP = strMap(ANY);

/** Unparameterized `dict` (any key type): plain object for str keys, Map otherwise. */
export const DICT: Codec<Record<string, unknown> | Map<unknown, unknown>> = {
  label: "dict",
  nullable: false,
  decode: (r) => {
    if (!r.isMap()) fail(`expected map, got ${r.isArray() ? "array" : "non-map value"}`);
    return r.any() as Record<string, unknown> | Map<unknown, unknown>;
  },
  encode: (w, v) => {
    if (typeof v !== "object" || v === null || Array.isArray(v))
      fail(`expected an object or Map, got ${describeValue(v)}`);
    encodeAny(w, v);
  },
};

/** `str | list[str]` (SamplingParams.stop). */
export const STR_OR_STR_LIST = union(
  "str | list[str]",
  { test: (r) => r.isStr(), codec: STR, accepts: (v) => typeof v === "string" },
  { codec: list(STR) },
);

/** `int | str` (EngineCoreOutput.stop_reason). */
export const INT_OR_STR = union(
  "int | str",
  { test: (r) => r.isStr(), codec: STR, accepts: (v) => typeof v === "string" },
  { codec: INT },
);

/** `str | dict` (StructuredOutputsParams.json: a schema string or a schema object). */
export const STR_OR_DICT = union(
  "str | dict",
  { test: (r) => r.isStr(), codec: STR, accepts: (v) => typeof v === "string" },
  { codec: DICT },
);

export const INT_LIST = list(INT);
export const STR_LIST = list(STR);
