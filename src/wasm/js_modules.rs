//! The modules of `src/js` that only other modules there import. wasm-bindgen copies a
//! JS file into the package only when Rust names it in an import, so each is named here,
//! by a type that nothing uses.

use wasm_bindgen::prelude::*;

// The value readers of the columns that column.js builds.
#[wasm_bindgen(module = "/src/js/readers.js")]
extern "C" {
    type Readers;
}

// What the package entries add to the glue; pkg-scripts/build.sh re-exports it from the
// web build's snippets as extras.js.
#[wasm_bindgen(module = "/src/js/protocols.js")]
extern "C" {
    type Protocols;
}

// Flight SQL on a FlightClient, which protocols.js imports. In the decode-only build too:
// protocols.js imports it there as well.
#[wasm_bindgen(module = "/src/js/sql.js")]
extern "C" {
    type FlightSql;
}
