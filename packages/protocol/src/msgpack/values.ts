// Wrapper types that keep msgspec distinctions JavaScript numbers and objects cannot express.

/** A number that must travel as a msgpack float64 even when it is integral (Python `float`). */
export class Float64 {
  readonly value: number;
  constructor(value: number) {
    this.value = value;
  }
  valueOf(): number {
    return this.value;
  }
  toJSON(): number {
    return this.value;
  }
}

/** A msgpack extension value (type code + raw payload) found in an opaque position. */
export class MsgpackExt {
  readonly type: number;
  readonly data: Uint8Array;
  constructor(type: number, data: Uint8Array) {
    this.type = type;
    this.data = data;
  }
}
