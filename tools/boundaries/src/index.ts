export {
  type CheckResult,
  CONFIG,
  checkBoundaries,
  formatViolations,
  type ImportViolation,
  scanRoots,
  type Violation,
} from "./check.js";
export { checkManifests, MANIFEST_RULES, type ManifestViolation } from "./manifests.js";
