//! The modules of `src/js` that only other modules there import. wasm-bindgen copies a
//! JS file into the package only when Rust names it in an import, so each is named here,
//! by a type that nothing uses.

use wasm_bindgen::prelude::*;

// The value readers of the columns that column.js builds.
#[wasm_bindgen(module = "/src/js/readers.js")]
extern "C" {
    type Readers;
}
