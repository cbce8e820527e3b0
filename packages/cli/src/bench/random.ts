// A small seeded PRNG (xoshiro128**, seeded through splitmix32) with the draws the benchmark needs: uniform
// integers (numpy `Generator.integers`), exponential and gamma intervals (numpy `random.gamma`). The same seed
// gives the same prompts and arrival times on every run of this tool; the numbers are not numpy's.

export class SeededRandom {
  #s0: number;
  #s1: number;
  #s2: number;
  #s3: number;

  constructor(seed: number) {
    let x = seed >>> 0;
    const next = () => {
      // splitmix32
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.#s0 = next();
    this.#s1 = next();
    this.#s2 = next();
    this.#s3 = next();
  }

  /** Next 32-bit unsigned integer (xoshiro128**). */
  nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.#s1, 5) >>> 0, 7), 9) >>> 0;
    const t = (this.#s1 << 9) >>> 0;
    this.#s2 ^= this.#s0;
    this.#s3 ^= this.#s1;
    this.#s1 ^= this.#s2;
    this.#s0 ^= this.#s3;
    this.#s2 ^= t;
    this.#s3 = rotl(this.#s3, 11);
    this.#s0 >>>= 0;
    this.#s1 >>>= 0;
    this.#s2 >>>= 0;
    return result;
  }

  /** Uniform in [0, 1) with 53 bits. */
  nextFloat(): number {
    const hi = this.nextUint32() >>> 5;
    const lo = this.nextUint32() >>> 6;
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** Uniform integer in [low, high) (numpy `integers(low, high)`). */
  integer(low: number, high: number): number {
    return low + Math.floor(this.nextFloat() * (high - low));
  }

  /** Standard normal (Box–Muller). */
  normal(): number {
    const u = 1 - this.nextFloat();
    const v = this.nextFloat();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** Gamma(shape, scale) (Marsaglia–Tsang; shape < 1 boosted). shape 1 is exponential with mean `scale`. */
  gamma(shape: number, scale: number): number {
    if (shape === 1) return -Math.log(1 - this.nextFloat()) * scale;
    if (shape < 1) return this.gamma(shape + 1, scale) * (1 - this.nextFloat()) ** (1 / shape);
    const d = shape - 1 / 3;
    const c = 1 / Math.sqrt(9 * d);
    for (;;) {
      let x: number;
      let v: number;
      do {
        x = this.normal();
        v = 1 + c * x;
      } while (v <= 0);
      v = v * v * v;
      const u = this.nextFloat();
      if (u < 1 - 0.0331 * x ** 4 || Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v)))
        return d * v * scale;
    }
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
