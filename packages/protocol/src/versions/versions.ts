// The vLLM revisions whose engine-core wire format this codec speaks, oldest first. A struct field
// records the first of these that has it (`since`); the decoder picks each message's layout from what
// the wire shows, and encoders can target any of them. See VERSIONS.md for every difference.

/** Codec version ids, oldest first: the releases, the pinned main revision, and main after the pin. */
export const VLLM_VERSIONS = ["0.22", "0.23", "0.24", "0.25", "main", "next"] as const;
export type VllmVersion = (typeof VLLM_VERSIONS)[number];

/** The layout encoders write unless told otherwise: main at the pinned revision (VLLM_REVISION). */
export const PINNED_VERSION: VllmVersion = "main";

export interface VllmVersionInfo {
  readonly id: VllmVersion;
  /** Column heading for tables. */
  readonly label: string;
  /** The git revision the field lists were read from (a tag, or a main commit). */
  readonly revision: string;
  readonly commit: string;
  readonly date: string;
  readonly note: string;
}

export const VLLM_VERSION_INFO: Readonly<Record<VllmVersion, VllmVersionInfo>> = {
  "0.22": {
    id: "0.22",
    label: "v0.22.x",
    revision: "v0.22.1",
    commit: "0decac0d96c42b49572498019f0a0e3600f50398",
    date: "2026-06-03",
    note: "v0.22.0 (0b3ba88f) has the same wire structs",
  },
  "0.23": {
    id: "0.23",
    label: "v0.23.0",
    revision: "v0.23.0",
    commit: "0fc695fc6d1d82e9a5ac6835ac8e4e1c83703665",
    date: "2026-06-14",
    note: "there is no v0.23.1 final tag",
  },
  "0.24": {
    id: "0.24",
    label: "v0.24.0",
    revision: "v0.24.0",
    commit: "ee0da84ab9e04ac7610e28580af62c365e898389",
    date: "2026-06-28",
    note: "",
  },
  "0.25": {
    id: "0.25",
    label: "v0.25.x",
    revision: "v0.25.1",
    commit: "752a3a504485790a2e8491cacbb35c137339ad34",
    date: "2026-07-12",
    note: "v0.25.0 (702f4814) has the same wire structs",
  },
  main: {
    id: "main",
    label: "main @c67fe497",
    revision: "c67fe497a25d5af10a6ca0be9d18bcdd42cac4f1",
    commit: "c67fe497a25d5af10a6ca0be9d18bcdd42cac4f1",
    date: "2026-08-01",
    note: "the pinned revision (VLLM_REVISION)",
  },
  next: {
    id: "next",
    label: "main after the pin",
    revision: "58d3918e3ea0a544ffedadad2ba84559e9c51d8f",
    commit: "58d3918e3ea0a544ffedadad2ba84559e9c51d8f",
    date: "2026-08-08",
    note: "upstream main after the pin (newest upstream commit read); expected in v0.26",
  },
};

const RANK: Readonly<Record<VllmVersion, number>> = Object.fromEntries(
  VLLM_VERSIONS.map((v, i) => [v, i]),
) as Record<VllmVersion, number>;

/** Position in VLLM_VERSIONS (0 = oldest). */
export function versionRank(v: VllmVersion): number {
  const rank = RANK[v];
  if (rank === undefined) throw new RangeError(`unknown vLLM version id ${JSON.stringify(v)}`);
  return rank;
}

export function isVllmVersion(v: unknown): v is VllmVersion {
  return typeof v === "string" && Object.hasOwn(RANK, v);
}

/** True when version `v` has something introduced in `since` (undefined = every supported version). */
export function versionHas(v: VllmVersion, since: VllmVersion | undefined): boolean {
  return since === undefined || versionRank(since) <= versionRank(v);
}

/**
 * The codec version id of a release's `vllm_version` string (EngineCoreReadyResponse, from v0.23):
 * "0.24.0" → "0.24", "0.25.1" → "0.25", "0.23.1rc0" → "0.23". Development builds ("0.26.0.dev12+g…",
 * local versions) and releases outside 0.22–0.25 give undefined: such a string does not say which
 * side of a main change the build is on, so only the wire itself can tell.
 */
export function versionFromVllmVersionString(reported: string): VllmVersion | undefined {
  const m = /^v?0\.(\d+)\.\d+(?:rc\d+)?$/.exec(reported.trim());
  if (m === null) return undefined;
  const minor = Number(m[1]);
  return minor >= 22 && minor <= 25 ? (`0.${minor}` as VllmVersion) : undefined;
}
