//! The JavaScript API. Every `#[wasm_bindgen]` item lives here, and each export is a few
//! lines: check the input, call the core in [`crate::ipc`], convert errors with `?`.

mod arrowjs;
mod batch;
#[cfg(feature = "writer")]
mod chunks;
mod column_types;
mod error;
mod file;
#[cfg(feature = "writer")]
mod file_writer;
#[cfg(feature = "flight")]
mod flight;
#[cfg(feature = "writer")]
mod from_js;
mod js_modules;
mod layout;
mod memory;
mod object;
mod options;
mod reader;
mod schema;
#[cfg(feature = "writer")]
mod writer;
#[cfg(feature = "writer")]
mod writer_options;

pub use arrowjs::to_arrow_js;
pub use batch::{RecordBatch, Table};
#[cfg(feature = "writer")]
pub use chunks::Chunks;
pub use error::WasmResult;
pub use file::ArrowFile;
#[cfg(feature = "writer")]
pub use file_writer::FileWriter;
#[cfg(feature = "flight")]
pub use flight::{FlightClient, FlightStream, PutStream};
#[cfg(feature = "writer")]
pub use from_js::{batch_from_columns, from_arrow_js, import_stats};
pub use reader::{table_from_ipc, StreamReader};
#[cfg(feature = "writer")]
pub use writer::{message_size, table_to_ipc, StreamWriter};
#[cfg(feature = "writer")]
pub use writer_options::WriterOptionsJs;

#[cfg(feature = "debug")]
#[wasm_bindgen::prelude::wasm_bindgen(start)]
fn start() {
    console_error_panic_hook::set_once();
}
