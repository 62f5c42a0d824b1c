//! Opening streams on a connection: the request goes out and the stream's state is
//! registered under its id in one step. A connection that is gone gives a stream that
//! has already failed, so that the failure arrives where the caller awaits.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::Function;
use web_sys::AbortSignal;

use super::conn::{ConnRef, Stream};
use super::get::{GetOptions, GetState};
use super::put::PutState;
use crate::flight::control::{ClientMessage, Descriptor};

/// Starts a DoGet of `ticket` at `location` (none: the gateway's upstream).
pub(super) fn open_get(
    conn: &ConnRef,
    ticket: Vec<u8>,
    location: Option<String>,
    window: Option<u64>,
    signal: Option<AbortSignal>,
    on_progress: Option<Function>,
) -> Rc<RefCell<GetState>> {
    let mut c = conn.borrow_mut();
    let max_segment = c.limits.max_segment;
    let options = GetOptions {
        // Four segments at least, so that granting in steps never stalls the sender.
        window: window.unwrap_or(c.limits.credit_window.max(4 * max_segment as u64)),
        max_segment,
    };
    let credit = Some(options.window);
    let ws = match c.ws() {
        Ok(ws) => ws,
        Err(failure) => return GetState::failed(failure, &options),
    };
    let opened = c.open(
        |stream| ClientMessage::DoGet {
            stream,
            ticket,
            location,
            credit,
        },
        |id| {
            let state = Rc::new(RefCell::new(GetState::new(
                id,
                Some(Rc::clone(conn)),
                Some(ws),
                &options,
                on_progress,
            )));
            (Stream::Get(Rc::clone(&state)), state)
        },
    );
    drop(c);
    match opened {
        Ok(state) => {
            GetState::watch(&state, signal);
            state
        }
        Err(failure) => GetState::failed(failure, &options),
    }
}

/// Starts a DoPut to `descriptor`.
pub(super) fn open_put(conn: &ConnRef, descriptor: Descriptor) -> Rc<RefCell<PutState>> {
    let mut c = conn.borrow_mut();
    let max_segment = c.limits.max_segment;
    let ws = match c.ws() {
        Ok(ws) => ws,
        Err(failure) => return Rc::new(RefCell::new(PutState::failed(failure))),
    };
    let opened = c.open(
        |stream| ClientMessage::DoPut { stream, descriptor },
        |id| {
            let state = Rc::new(RefCell::new(PutState::new(id, Some(ws), max_segment)));
            (Stream::Put(Rc::clone(&state)), state)
        },
    );
    opened.unwrap_or_else(|failure| Rc::new(RefCell::new(PutState::failed(failure))))
}
