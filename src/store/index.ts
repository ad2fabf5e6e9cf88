/**
 * The output store's public surface: where full tool outputs are kept and read back by handle.
 * Hosts (CLI, proxy, extension) import from here; the modules behind it are implementation.
 */
export { FileStore, OBJECTS_DIR, STALE_TEMP_MS, type FileStoreOptions, type StoreCheck } from './store';
export { MemoryStore, type MemoryStoreOptions } from './memory';
export {
  HANDLE_SHAPE,
  USED_REFRESH_MS,
  assertHandle,
  type OutputStore,
  type PruneOptions,
  type PruneResult,
  type StoreEntry,
  type StoredCall,
} from './entry';
export {
  MAX_ANSWER_CHARS,
  answerText,
  parseLineRange,
  planRead,
  readAnswer,
  readText,
  type ReadAnswer,
  type ReadOptions,
  type ReadRange,
  type ReadResult,
} from './read';
export { countLines, cutAtLimit, grepLines, lineSpans, selectLines, sliceChars } from './slice';
export { DEFAULT_FIND_LIMIT, MAX_FIND_LIMIT, findOutputs, type FindFilter, type FindResult } from './find';
