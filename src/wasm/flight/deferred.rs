//! JS promises: one whose settling is left to a socket event, and one a future settles.

use std::future::Future;
use std::pin::Pin;

use js_sys::{Function, Promise};
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::future_to_promise;

use super::error::to_js;
use crate::flight::client::Failure;

/// The resolve and reject functions of a pending promise. Settling a settled promise does
/// nothing, so a clone may be kept for the path where the first one is never used.
#[derive(Clone)]
pub(super) struct Deferred {
    resolve: Function,
    reject: Function,
}

impl Deferred {
    pub fn new() -> (Promise, Deferred) {
        let mut slots = None;
        let promise = Promise::new(&mut |resolve, reject| slots = Some((resolve, reject)));
        // Cannot fail: the executor runs synchronously inside `new Promise` (ECMA-262
        // 27.2.3.1), so `slots` is filled before `Promise::new` returns.
        #[allow(clippy::expect_used)]
        let (resolve, reject) = slots.expect("the Promise executor ran");
        (promise, Deferred { resolve, reject })
    }

    pub fn resolve(self, value: &JsValue) {
        let _ = self.resolve.call1(&JsValue::UNDEFINED, value);
    }

    pub fn reject(self, failure: &Failure) {
        let _ = self.reject.call1(&JsValue::UNDEFINED, &to_js(failure));
    }

    pub fn settle(self, result: Result<JsValue, Failure>) {
        match result {
            Ok(value) => self.resolve(&value),
            Err(failure) => self.reject(&failure),
        }
    }
}

/// The promise of `future`, through one `future_to_promise` for every call: each future
/// type of its own would instantiate its promise and task code again (docs/size.md).
pub(super) fn promise(future: impl Future<Output = Result<JsValue, JsValue>> + 'static) -> Promise {
    let future: Pin<Box<dyn Future<Output = Result<JsValue, JsValue>>>> = Box::pin(future);
    future_to_promise(future)
}
