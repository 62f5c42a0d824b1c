//! `toArrowJS`: Quiver batches and tables as apache-arrow JS objects, built by
//! `src/js/arrowjs.js` with the caller's own `arrow` module.

use wasm_bindgen::prelude::*;

use super::batch::{options_value, ToArrowJSOptionsJs};

#[wasm_bindgen(module = "/src/js/arrowjs.js")]
extern "C" {
    /// Calls `source.toArrowJS(arrow, options)`, or throws if `source` is not a Quiver
    /// batch or table (wasm-bindgen cannot borrow either class from a `JsValue`).
    #[wasm_bindgen(js_name = toArrowJSOf, catch)]
    fn to_arrow_js_of(
        source: &JsValue,
        arrow: &JsValue,
        options: &JsValue,
    ) -> Result<JsValue, JsValue>;
}

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
    to_arrow_js_of(&source, &arrow, &options_value(options))
}
