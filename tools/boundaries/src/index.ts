export {
  type CheckResult,
  checkRepository,
  formatViolations,
  type ImportViolation,
  type ManifestViolation,
  type Violation,
} from "./check.js";
export { findImports, type ImportSite } from "./imports.js";
export { IMPORT_RULES, type ImportRule, MANIFEST_RULES, SCAN_ROOTS } from "./policy.js";
