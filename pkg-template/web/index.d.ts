export * from './quiver.js';
import type { InitInput, InitOutput, SyncInitInput } from './quiver.js';

/** What the memory of the module may be; the first init() or initSync() decides. */
export interface MemoryOptions {
  /**
   * `false` keeps wasm memory a fixed-length buffer where the engine could make it
   * resizable (Chromium, Firefox). V8 reads typed arrays over a fixed-length buffer faster,
   * but a typed array kept in a variable then reads as empty once memory grows (each
   * column's `values` is made again), and writer chunks and `toArrowJS` copy. Default `true`.
   */
  resizableMemory?: boolean;
}

/**
 * Loads and instantiates the wasm module; call it once before anything else. Later calls
 * return the same instance. With no argument it fetches `quiver_bg.wasm` next to this
 * file; `module_or_path` loads it from elsewhere. The first call decides
 * `resizableMemory`; a later one that asks for the other kind throws.
 */
export default function init(
  options?: ({ module_or_path?: InitInput | Promise<InitInput> } & MemoryOptions) | InitInput | Promise<InitInput>,
): Promise<InitOutput>;

/**
 * init() for a module or bytes you already have, without a fetch: `initSync({ module })`,
 * with the same `resizableMemory` option.
 */
export function initSync(options: ({ module: SyncInitInput } & MemoryOptions) | SyncInitInput): InitOutput;
