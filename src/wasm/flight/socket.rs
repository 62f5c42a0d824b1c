//! `Socket`: a WebSocket that owns its event listeners. They are Rust closures held here,
//! never leaked (no `forget`), and removed when the socket is dropped.

use std::rc::Rc;

use js_sys::{Array, ArrayBuffer, Function, Reflect};
use wasm_bindgen::prelude::*;
use web_sys::{BinaryType, CloseEvent, Event, MessageEvent, WebSocket};

#[wasm_bindgen(module = "/src/js/flight.js")]
extern "C" {
    fn quiet(socket: &WebSocket);
}

/// What the socket reports. Its opening is not one: the client waits for the gateway's
/// `hello`, which follows it.
pub(super) enum SocketEvent {
    Text(String),
    Binary(ArrayBuffer),
    Close { code: u16, reason: String },
}

type Listener = Closure<dyn FnMut(Event)>;

pub(super) struct Socket {
    ws: WebSocket,
    listeners: Vec<(&'static str, Listener)>,
}

impl Socket {
    /// Opens `url` with `protocols`. `constructor` is a `WebSocket`-compatible class (Node's
    /// `ws` package); by default the global `WebSocket`.
    pub fn open(
        url: &str,
        protocols: &[String],
        constructor: Option<&Function>,
        on_event: impl Fn(SocketEvent) + 'static,
    ) -> Result<Socket, JsValue> {
        let offered = Array::new();
        for p in protocols {
            offered.push(&JsValue::from_str(p));
        }
        let ws: WebSocket = match constructor {
            Some(class) => {
                let args = Array::of2(&url.into(), &offered);
                Reflect::construct(class, &args)?.unchecked_into()
            }
            None => WebSocket::new_with_str_sequence(url, &offered)?,
        };
        // Array buffers arrive in order and synchronously; Blobs would need async reads.
        ws.set_binary_type(BinaryType::Arraybuffer);
        let on_event: Rc<dyn Fn(SocketEvent)> = Rc::new(on_event);
        let mut socket = Socket {
            ws,
            listeners: Vec::new(),
        };
        let on = Rc::clone(&on_event);
        socket.listen("message", move |event| {
            let data = event.unchecked_into::<MessageEvent>().data();
            if let Some(text) = data.as_string() {
                on(SocketEvent::Text(text));
            } else if let Ok(buffer) = data.dyn_into::<ArrayBuffer>() {
                on(SocketEvent::Binary(buffer));
            }
        })?;
        // A close event always follows an error, and says more. The listener still matters:
        // Node's `ws` throws on an 'error' event that nothing listens to.
        socket.listen("error", |_| {})?;
        socket.listen("close", move |event| {
            let event = event.unchecked_into::<CloseEvent>();
            on_event(SocketEvent::Close {
                code: event.code(),
                reason: event.reason(),
            });
        })?;
        Ok(socket)
    }

    fn listen(
        &mut self,
        kind: &'static str,
        f: impl FnMut(Event) + 'static,
    ) -> Result<(), JsValue> {
        let listener = Closure::<dyn FnMut(Event)>::new(f);
        self.ws
            .add_event_listener_with_callback(kind, listener.as_ref().unchecked_ref())?;
        self.listeners.push((kind, listener));
        Ok(())
    }

    pub fn ws(&self) -> &WebSocket {
        &self.ws
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        for (kind, listener) in self.listeners.drain(..) {
            let _ = self
                .ws
                .remove_event_listener_with_callback(kind, listener.as_ref().unchecked_ref());
        }
        quiet(&self.ws);
        // A socket still connecting is closed too: nothing will ever read from it.
        if self.ws.ready_state() <= WebSocket::OPEN {
            let _ = self.ws.close();
        }
    }
}
