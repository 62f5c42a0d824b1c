//! `toArrowJS`: Quiver batches and tables as apache-arrow JS objects, built by
//! `src/js/arrowjs.js` with the caller's own `arrow` module.

use wasm_bindgen::prelude::*;

use super::batch::{call_on_batch_or_table, options_value, ToArrowJSOptionsJs};

#[wasm_bindgen(typescript_custom_section)]
const TO_ARROW_JS_TS: &str = r#"
/** A Quiver `Table` as an apache-arrow JS `Table` (see the declaration for either below). */
export function toArrowJS(source: Table, arrow: typeof import('apache-arrow'), options?: ToArrowJSOptions | null): import('apache-arrow').Table;
/** A Quiver `RecordBatch` as an apache-arrow JS `RecordBatch` (see the declaration for either below). */
export function toArrowJS(source: RecordBatch, arrow: typeof import('apache-arrow'), options?: ToArrowJSOptions | null): import('apache-arrow').RecordBatch;
"#;

/// A Quiver `RecordBatch` or `Table` as an apache-arrow JS `RecordBatch` or `Table`,
/// built with the `arrow` module you pass (Quiver bundles none).
///
/// Memory: where wasm memory is a resizable buffer (Chromium), the result's `Data`
/// buffers are views of wasm memory, no copy, and survive growth; the result holds a
/// clone of `source` (shared buffers), so they stay valid until the result itself is
/// garbage-collected, even if you `free()` the source. Elsewhere (Node 20) the buffers are
/// copied, unless `{ zeroCopy: true }`: then they are views that DETACH, reading as
/// empty, once wasm memory grows. Throws for a type Arrow JS cannot represent
/// (run-end encoded), naming the field and the type.
///
/// ```js
/// import * as arrow from "apache-arrow";
/// using table = tableFromIPC(bytes);
/// const arrowTable = toArrowJS(table, arrow);
/// console.log(arrowTable.getChild("price").get(0));
/// ```
#[wasm_bindgen(
    js_name = toArrowJS,
    unchecked_return_type = "import('apache-arrow').RecordBatch | import('apache-arrow').Table"
)]
pub fn to_arrow_js(
    #[wasm_bindgen(unchecked_param_type = "RecordBatch | Table")] source: JsValue,
    #[wasm_bindgen(unchecked_param_type = "typeof import('apache-arrow')")] arrow: JsValue,
    options: Option<ToArrowJSOptionsJs>,
) -> Result<JsValue, JsValue> {
    call_on_batch_or_table(
        "toArrowJS",
        "toArrowJS",
        &source,
        &arrow,
        &options_value(options),
    )
}
