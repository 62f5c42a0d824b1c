//! `AbortWatch`: runs a function when an `AbortSignal` aborts, until it is dropped.

use wasm_bindgen::prelude::*;
use web_sys::{AbortSignal, Event};

/// An `abort` listener that removes itself when dropped.
pub(super) struct AbortWatch {
    signal: AbortSignal,
    listener: Closure<dyn FnMut(Event)>,
}

impl AbortWatch {
    /// Calls `on_abort` when `signal` aborts, or now if it already has (then returns none).
    pub fn new(signal: AbortSignal, mut on_abort: impl FnMut() + 'static) -> Option<Self> {
        if signal.aborted() {
            on_abort();
            return None;
        }
        let listener = Closure::<dyn FnMut(Event)>::new(move |_: Event| on_abort());
        let _ = signal.add_event_listener_with_callback("abort", listener.as_ref().unchecked_ref());
        Some(AbortWatch { signal, listener })
    }
}

impl Drop for AbortWatch {
    fn drop(&mut self) {
        let _ = self
            .signal
            .remove_event_listener_with_callback("abort", self.listener.as_ref().unchecked_ref());
    }
}
