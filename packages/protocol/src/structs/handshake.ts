// Startup messages: HELLO/READY status dicts, INIT (EngineHandshakeMetadata) and the input-socket
// registration (EngineCoreReadyResponse) — vllm/v1/engine/{core,utils,__init__}.py, config/kv_events.py.
import { ANY, BOOL, FLOAT, INT, nullable, STR, strMap } from "../schema/codec.js";
import {
  type Decoded,
  type Init,
  mapStruct,
  optional,
  required,
  since,
  sparseStruct,
} from "../schema/struct.js";
import { STR_LIST } from "./common.js";

const none = () => null;

export const EngineZmqAddressesCodec = mapStruct("EngineZmqAddresses", [
  required("inputs", "inputs", STR_LIST),
  required("outputs", "outputs", STR_LIST),
  optional("coordinator_input", "coordinatorInput", nullable(STR), none),
  optional("coordinator_output", "coordinatorOutput", nullable(STR), none),
  optional("frontend_stats_publish_address", "frontendStatsPublishAddress", nullable(STR), none),
] as const);

export const EngineHandshakeMetadataCodec = mapStruct("EngineHandshakeMetadata", [
  required("addresses", "addresses", EngineZmqAddressesCodec),
  required("parallel_config", "parallelConfig", strMap(ANY)),
] as const);

export const KVEventsConfigCodec = mapStruct("KVEventsConfig", [
  optional("enable_kv_cache_events", "enableKvCacheEvents", BOOL, () => false),
  optional("publisher", "publisher", nullable(STR), none),
  optional("endpoint", "endpoint", STR, () => "tcp://*:5557"),
  optional("replay_endpoint", "replayEndpoint", nullable(STR), none),
  optional("buffer_steps", "bufferSteps", INT, () => 10_000),
  optional("hwm", "hwm", INT, () => 100_000),
  optional("max_queue_size", "maxQueueSize", INT, () => 100_000),
  optional("topic", "topic", STR, () => ""),
] as const);

/**
 * Dataclass → a map of all its fields: 4 keys in v0.22 (fixmap), 6 in v0.23, 10 in v0.24–v0.25, 18 at
 * the pin (map16). Keys are decoded by name, so the version is read from the keys present; a key the
 * engine's version does not have is absent from the view (`blockSize` etc. "not reported").
 * v0.22 declares `dtype: str | None = None` but always sends a str (process_input_sockets).
 */
export const EngineCoreReadyResponseCodec = mapStruct("EngineCoreReadyResponse", [
  required("max_model_len", "maxModelLen", INT),
  required("num_gpu_blocks", "numGpuBlocks", INT),
  since("0.23", required("block_size", "blockSize", INT)),
  required("dp_stats_address", "dpStatsAddress", nullable(STR)),
  required("dtype", "dtype", STR),
  since("0.23", required("vllm_version", "vllmVersion", STR)),
  since("0.24", required("world_size", "worldSize", INT)),
  since("0.24", required("data_parallel_size", "dataParallelSize", INT)),
  since("main", required("tensor_parallel_size", "tensorParallelSize", INT)),
  since("main", required("pipeline_parallel_size", "pipelineParallelSize", INT)),
  since("main", required("decode_context_parallel_size", "decodeContextParallelSize", INT)),
  since("main", required("data_parallel_rank", "dataParallelRank", INT)),
  since("main", required("max_num_seqs", "maxNumSeqs", INT)),
  since("main", required("max_num_batched_tokens", "maxNumBatchedTokens", INT)),
  since("main", required("instance_id", "instanceId", STR)),
  since("0.24", optional("kv_cache_size_tokens", "kvCacheSizeTokens", nullable(INT), none)),
  since("0.24", optional("kv_cache_max_concurrency", "kvCacheMaxConcurrency", nullable(FLOAT), none)),
  since("main", optional("kv_events_config", "kvEventsConfig", nullable(KVEventsConfigCodec), none)),
] as const);

/**
 * HELLO / READY: a plain Python dict `{status, local, headless[, parallel_config_hash]}` in that order.
 * Modelled as a sparse map so the optional hash is written only when present.
 */
export const HandshakeStatusCodec = sparseStruct("HandshakeStatus", [
  optional("status", "status", STR, () => ""),
  optional("local", "local", BOOL, () => false),
  optional("headless", "headless", BOOL, () => false),
  optional("parallel_config_hash", "parallelConfigHash", STR, () => ""),
] as const);

export type EngineZmqAddresses = Decoded<typeof EngineZmqAddressesCodec>;
export type EngineZmqAddressesInit = Init<typeof EngineZmqAddressesCodec>;
export type EngineHandshakeMetadata = Decoded<typeof EngineHandshakeMetadataCodec>;
export type EngineHandshakeMetadataInit = Init<typeof EngineHandshakeMetadataCodec>;
export type KVEventsConfig = Decoded<typeof KVEventsConfigCodec>;
export type KVEventsConfigInit = Init<typeof KVEventsConfigCodec>;
export type EngineCoreReadyResponse = Decoded<typeof EngineCoreReadyResponseCodec>;
export type EngineCoreReadyResponseInit = Init<typeof EngineCoreReadyResponseCodec>;

export interface HandshakeStatus {
  status: "HELLO" | "READY" | (string & {});
  local: boolean;
  headless: boolean;
  /** Only in READY from engines with data_parallel_size > 1. */
  parallelConfigHash?: string | undefined;
}
