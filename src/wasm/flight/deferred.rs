//! A JS promise whose settling is left to a socket event.

use js_sys::{Function, Promise};
use wasm_bindgen::JsValue;

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
