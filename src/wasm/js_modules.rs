//! The modules of `src/js` that only other modules there import. wasm-bindgen copies a
//! JS file into the package only when Rust names it in an import, so each is named here,
//! by a type that nothing uses.

use wasm_bindgen::prelude::*;

// The value readers of the columns that column.js builds.
#[wasm_bindgen(module = "/src/js/readers.js")]
extern "C" {
    type Readers;
}

// The value options that the columns' get/toArray check.
#[wasm_bindgen(module = "/src/js/value_options.js")]
extern "C" {
    type ValueOptionsModule;
}

// What the package entries add to the glue; pkg-scripts/build.sh re-exports it from the
// web build's snippets as extras.js.
#[wasm_bindgen(module = "/src/js/protocols.js")]
extern "C" {
    type Protocols;
}

// What protocols.js adds for streams: the sources StreamReader.from reads, the reader
// over them, and the writer as a TransformStream.
#[wasm_bindgen(module = "/src/js/sources.js")]
extern "C" {
    type Sources;
}

#[wasm_bindgen(module = "/src/js/reader_stream.js")]
extern "C" {
    type ReaderStream;
}

#[wasm_bindgen(module = "/src/js/writer_stream.js")]
extern "C" {
    type WriterStream;
}

// Flight SQL on a FlightClient, which protocols.js imports. In the decode-only build too:
// protocols.js imports it there as well.
#[wasm_bindgen(module = "/src/js/sql.js")]
extern "C" {
    type FlightSql;
}
