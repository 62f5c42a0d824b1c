export * from './quiver.cjs';

/**
 * The web build's memory option, declared here too so that shared code type-checks with
 * either build. Node's wasm memory is always a fixed-length buffer, and `init` ignores it.
 */
export interface MemoryOptions {
  resizableMemory?: boolean;
}

/**
 * Does nothing: in Node the module is ready once imported. It exists so that code written
 * for the web build (`await init()`) runs unchanged.
 */
export default function init(moduleOrPath?: unknown): Promise<void>;

/** Does nothing in Node; see `init`. */
export function initSync(module?: unknown): void;
