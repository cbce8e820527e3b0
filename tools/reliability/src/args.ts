// Minimal `--name value` argument parsing for the scripts (numbers only; unknown flags are an error).
export function numberArgs<T extends Record<string, number>>(argv: readonly string[], defaults: T): T {
  const result: Record<string, number> = { ...defaults };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const name = flag.replace(/^--/, "").replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    if (!flag.startsWith("--") || !(name in defaults)) {
      throw new Error(
        `unknown argument ${flag}; known: ${Object.keys(defaults)
          .map((k) => `--${k}`)
          .join(" ")}`,
      );
    }
    const value = Number(argv[++i]);
    if (!Number.isFinite(value)) throw new Error(`${flag} needs a number, got ${argv[i]}`);
    result[name] = value;
  }
  return result as T;
}
