//! The JavaScript API. Every `#[wasm_bindgen]` item lives here, and each export is a few
//! lines: check the input, call the core in [`crate::ipc`], convert errors with `?`.

mod arrowjs;
mod batch;
mod error;
mod layout;
mod memory;
mod options;
mod reader;
mod schema;

pub use arrowjs::to_arrow_js;
pub use batch::{RecordBatch, Table};
pub use error::WasmResult;
pub use reader::{table_from_ipc, StreamReader};

#[cfg(feature = "debug")]
#[wasm_bindgen::prelude::wasm_bindgen(start)]
fn start() {
    console_error_panic_hook::set_once();
}
