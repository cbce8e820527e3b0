// Where the runtime worker entry lives. From dist (the published layout) it sits next to this module's
// directory; when the host runs from TypeScript sources (tests, tsx), Node cannot start a .ts worker, so
// the built bundle in dist/ is used explicitly.
export function runtimeWorkerUrl(): URL {
  const here = import.meta.url;
  if (here.endsWith(".ts")) return new URL("../../dist/runtime-thread/main.js", here);
  return new URL("../runtime-thread/main.js", here);
}
