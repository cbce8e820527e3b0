// mm_features: list[MultiModalFeatureSpec] (dataclasses of vllm/multimodal/inputs.py). Their `data` is a
// MultiModalKwargsItem, which msgspec hands to MsgpackDecoder.dec_hook (vllm/v1/serial_utils.py
// _decode_mm_item / _decode_mm_field_elem / _decode_nested_tensors / _decode_nested_slices); those
// rebuild each field with a MultiModalFieldConfig factory and fail on what they cannot rebuild.

import { Float64 } from "@vllm-engine-core/protocol";
import { type Checker, MISSING } from "./checker.js";
import {
  any,
  entries,
  int,
  isPlainObject,
  list,
  nullable,
  str,
  strMap,
  structObject,
} from "./msgspec-types.js";
import { verifyTensor } from "./tensor.js";

/** MultiModalFieldConfig factories _decode_mm_field_elem can call with ("", **kwargs), and their kwargs. */
const FACTORIES: Record<string, { required: string[]; allowed: string[] }> = {
  batched: { required: [], allowed: ["keep_on_cpu"] },
  flat: { required: ["slices"], allowed: ["slices", "dim", "keep_on_cpu"] },
  shared: { required: ["batch_size"], allowed: ["batch_size", "keep_on_cpu"] },
};

/** _decode_nested_tensors: a number, a tensor, or a list of nested tensors. */
function verifyNestedTensors(c: Checker, at: string, v: unknown): void {
  if (typeof v === "number" || v instanceof Float64) return;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) verifyNestedTensors(c, `${at}[${i}]`, v[i]);
    return;
  }
  if (isPlainObject(v) && ArrayBuffer.isView(v.data)) {
    verifyTensor(c, at, v);
    return;
  }
  c.fail("mm.nested", at, v);
}

/** _decode_nested_slices: a list whose first item is not a list → slice(*obj); else a list of such lists. */
function verifySlices(c: Checker, at: string, v: unknown): void {
  if (!Array.isArray(v)) c.fail("mm.slices", at, v);
  if (v.length > 0 && !Array.isArray(v[0])) {
    c.require(v.length <= 3, "mm.slices", at, v, `slice expected at most 3 arguments, got ${v.length}`);
    for (let i = 0; i < v.length; i++) any(c, `${at}[${i}]`, v[i]);
    return;
  }
  for (let i = 0; i < v.length; i++) verifySlices(c, `${at}[${i}]`, v[i]);
}

/** MultiModalFieldElem.field: [factory name, kwargs] (an opaque value on the wire). */
function verifyField(c: Checker, at: string, v: unknown): void {
  any(c, at, v);
  if (
    !Array.isArray(v) ||
    v.length !== 2 ||
    typeof v[0] !== "string" ||
    !(isPlainObject(v[1]) || v[1] instanceof Map)
  ) {
    c.fail("mm.field", at, v);
  }
  const name = v[0];
  const factory = Object.hasOwn(FACTORIES, name) ? FACTORIES[name] : undefined;
  if (factory === undefined) c.fail("mm.field", `${at}[0]`, name);
  // Called as factory("", **kwargs): the keys must be strings and name the factory's parameters.
  const kwargs = new Map(entries(c, `${at}[1]`, v[1]));
  for (const [k, x] of kwargs) {
    if (typeof k !== "string") c.fail("mm.field.kwargs", `${at}[1]`, k, "keywords must be strings");
    c.require(
      factory.allowed.includes(k),
      "mm.field.kwargs",
      `${at}[1].${k}`,
      x,
      `${name}() got an unexpected keyword argument '${k}'`,
    );
  }
  for (const k of factory.required) {
    if (!kwargs.has(k))
      c.fail("mm.field.kwargs", `${at}[1]`, v[1], `${name}() missing required argument '${k}'`);
  }
  if (name === "flat") verifySlices(c, `${at}[1].slices`, kwargs.get("slices"));
}

function verifyFeature(c: Checker, at: string, value: unknown): void {
  const spec = structObject(c, at, value, "object");
  const f = (key: string) => `${at}.${key}`;
  for (const key of ["modality", "identifier", "mmPosition"]) {
    if (spec[key] === undefined)
      c.fail("msgspec.required", f(key), MISSING, `Object missing required field \`${key}\``);
  }
  nullable(spec.data, (item) =>
    strMap(c, f("data"), item, (path, elem) => {
      const e = structObject(c, path, elem, "object");
      nullable(e.data, (d) => verifyNestedTensors(c, `${path}.data`, d));
      if (e.field === undefined)
        c.fail("msgspec.required", `${path}.field`, MISSING, "Object missing required field `field`");
      verifyField(c, `${path}.field`, e.field);
    }),
  );
  str(c, f("modality"), spec.modality);
  str(c, f("identifier"), spec.identifier);
  const pos = structObject(c, f("mmPosition"), spec.mmPosition, "object");
  for (const key of ["offset", "length"]) {
    if (pos[key] === undefined)
      c.fail(
        "msgspec.required",
        `${f("mmPosition")}.${key}`,
        MISSING,
        `Object missing required field \`${key}\``,
      );
    int(c, `${f("mmPosition")}.${key}`, pos[key]);
  }
  nullable(pos.isEmbed, (t) => verifyTensor(c, `${f("mmPosition")}.isEmbed`, t));
  nullable(spec.mmHash, (v) => str(c, f("mmHash"), v));
}

export function verifyMultiModalFeatures(c: Checker, at: string, value: unknown): void {
  list(c, at, value, (path, feature) => verifyFeature(c, path, feature));
}
