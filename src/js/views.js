// Placeholder until the views module lands: see src/wasm/layout.rs for the layout format.
export function makeColumn() {
  throw new Error("column views are not built yet");
}
