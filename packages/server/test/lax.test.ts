// The `lax` keyword against pydantic 2.13's lax mode. Each row is a probe run in vLLM's environment
// (`Model.model_validate({field: input})` on `float | None`, `int | None`, `bool | None`, `str | None`
// fields): the value pydantic produced, or the error type it raised. Ported as data.
import { describe, expect, it } from "vitest";
import { INT64_MAX, type LaxScalar, laxConvert, type PyError } from "../src/lax.js";
import { paramOfLoc, pyRepr, validationError } from "../src/validation-error.js";

type Row = [input: unknown, expected: unknown | { error: string }];
const err = (type: string) => ({ error: type });

const PYDANTIC: Record<"float" | "int" | "bool" | "str", Row[]> = {
  float: [
    ["1", 1],
    ["1.0", 1],
    [" 2 ", 2],
    ["1e3", 1000],
    ["abc", err("float_parsing")],
    ["", err("float_parsing")],
    [true, 1],
    [1.5, 1.5],
    ["yes", err("float_parsing")],
    ["0x10", err("float_parsing")],
    ["inf", Number.POSITIVE_INFINITY],
    ["1_000", 1000],
    [[1], err("float_type")],
    [{ a: 1 }, err("float_type")],
  ],
  int: [
    ["1", 1],
    ["1.0", 1],
    [" 2 ", 2],
    ["1e3", err("int_parsing")],
    ["abc", err("int_parsing")],
    ["", err("int_parsing")],
    [true, 1],
    [1.5, err("int_from_float")],
    ["inf", err("int_parsing")],
    ["1_000", 1000],
    [[1], err("int_type")],
  ],
  bool: [
    ["1", true],
    ["1.0", err("bool_parsing")],
    ["abc", err("bool_parsing")],
    ["", err("bool_parsing")],
    [true, true],
    [1, true],
    [0, false],
    [1.5, err("bool_type")],
    [2, err("bool_parsing")],
    ["yes", true],
    ["on", true],
    ["Off", false],
    ["t", true],
    ["n", false],
    [[1], err("bool_type")],
  ],
  str: [
    ["1", "1"],
    ["", ""],
    [true, err("string_type")],
    [1, err("string_type")],
    [[1], err("string_type")],
  ],
};

function run(type: LaxScalar, input: unknown): unknown {
  try {
    return laxConvert({ type, nullable: true }, input);
  } catch (error) {
    return { error: (error as PyError[])[0]!.type };
  }
}

describe("lax: pydantic's lax-mode conversions", () => {
  for (const [type, rows] of Object.entries(PYDANTIC) as [LaxScalar, Row[]][]) {
    it(`${type}: ${rows.length} probes`, () => {
      expect(rows.map(([input]) => run(type, input))).toEqual(rows.map(([, expected]) => expected));
    });
  }

  it("null: accepted by `X | None`, refused with X's type error otherwise", () => {
    expect(laxConvert({ type: "int", nullable: true }, null)).toBeNull();
    expect(() => laxConvert({ type: "int" }, null)).toThrow();
    try {
      laxConvert({ type: "bool" }, null);
    } catch (e) {
      expect((e as PyError[])[0]).toMatchObject({
        type: "bool_type",
        msg: "Input should be a valid boolean",
      });
    }
  });

  it("lists report each bad item at its index; unions one error per member", () => {
    let caught: PyError[] = [];
    try {
      laxConvert({ type: "list[int]" }, [1, "x", 2.5]);
    } catch (e) {
      caught = e as PyError[];
    }
    expect(caught.map((e) => [e.type, e.loc])).toEqual([
      ["int_parsing", [1]],
      ["int_from_float", [2]],
    ]);
    try {
      laxConvert({ type: "union", of: ["str", "list[str]"] }, 5);
    } catch (e) {
      caught = e as PyError[];
    }
    expect(caught.map((e) => [e.type, e.loc])).toEqual([
      ["string_type", ["str"]],
      ["list_type", ["list[str]"]],
    ]);
    expect(laxConvert({ type: "union", of: ["str", "list[str]"] }, ["a"])).toEqual(["a"]);
  });

  it("bounds: int64, printed as Python prints them", () => {
    let caught: PyError[] = [];
    try {
      laxConvert({ type: "int", le: INT64_MAX }, 2 ** 63);
    } catch (e) {
      caught = e as PyError[];
    }
    expect(caught[0]!.msg).toBe("Input should be less than or equal to 9223372036854775807");
    expect(pyRepr(caught[0]!.ctx)).toBe("{'le': 9223372036854775807}");
  });
});

describe("vLLM's validation message", () => {
  it("Python reprs and the dotted param without union-member markers", () => {
    expect(pyRepr({ a: [1, "b", null, true], "it's": 'say "x"' })).toBe(
      `{'a': [1, 'b', None, True], "it's": 'say "x"'}`,
    );
    expect(paramOfLoc(["body", "stop", "list[str]"])).toBe("body.stop");
    expect(paramOfLoc(["body", "stop_token_ids", 1])).toBe("body.stop_token_ids.1");
  });

  it("one error: vLLM's exact text (FastAPI + vLLM's validation_exception_handler, probed)", () => {
    const e = validationError([
      {
        type: "float_parsing",
        loc: ["body", "temperature"],
        msg: "Input should be a valid number, unable to parse string as a number",
        input: "abc",
      },
    ]);
    expect(e.status).toBe(400);
    expect(e.toBody()).toEqual({
      error: {
        message:
          "1 validation error:\n  {'type': 'float_parsing', 'loc': ('body', 'temperature'), 'msg': 'Input should be a valid number, unable to parse string as a number', 'input': 'abc'}",
        type: "Bad Request",
        param: "body.temperature",
        code: 400,
      },
    });
  });
});
