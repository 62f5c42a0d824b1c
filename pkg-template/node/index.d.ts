export * from './quiver.cjs';

/**
 * Does nothing: in Node the module is ready once imported. It exists so that code written
 * for the web build (`await init()`) runs unchanged.
 */
export default function init(moduleOrPath?: unknown): Promise<void>;

/** Does nothing in Node; see `init`. */
export function initSync(module?: unknown): void;
