//! `Call`: a request whose answer is a few control messages and a status (GetFlightInfo,
//! ListFlights, GetSchema, DoAction, ListActions). The messages are kept until the status,
//! then turned into the value the promise resolves with.

use js_sys::{Array, Object, Uint8Array};
use wasm_bindgen::prelude::*;

use super::super::object::set;
use super::super::schema::schema_to_js;
use super::conn::ConnRef;
use super::deferred::Deferred;
use super::error::{Failure, INTERNAL};
use super::info::{flight_info_to_js, schema_from_ipc};
use crate::flight::control::ServerMessage;

/// What the caller asked for, which decides what the answer becomes.
#[derive(Debug, Clone, Copy)]
pub(super) enum CallKind {
    /// Every `flightInfo`, as an array.
    ListFlights,
    /// The one `flightInfo`.
    FlightInfo,
    /// The `schema`, decoded.
    Schema,
    /// Every `result` body, as an array of `Uint8Array`.
    Action,
    /// Every `actionType`, as `{ type, description }`.
    ListActions,
}

pub(super) struct Call {
    kind: CallKind,
    messages: Vec<ServerMessage>,
    done: Deferred,
    /// Keeps the connection open while the call is pending, even if nothing else holds
    /// the client (`await (await FlightClient.connect(url)).listFlights()`). The cycle
    /// through the connection's stream table ends when the call does.
    _conn: ConnRef,
}

impl Call {
    pub fn new(kind: CallKind, done: Deferred, conn: ConnRef) -> Self {
        Call {
            kind,
            messages: Vec::new(),
            done,
            _conn: conn,
        }
    }

    pub fn push(&mut self, message: ServerMessage) {
        self.messages.push(message);
    }

    pub fn finish(self, result: Result<(), Failure>) {
        let kind = self.kind;
        let messages = self.messages;
        self.done
            .settle(result.and_then(|()| answer(kind, messages)));
    }
}

fn answer(kind: CallKind, messages: Vec<ServerMessage>) -> Result<JsValue, Failure> {
    use ServerMessage as M;
    let all = Array::new();
    for message in messages {
        match (kind, message) {
            (CallKind::ListFlights | CallKind::FlightInfo, M::FlightInfo { info, .. }) => {
                all.push(&flight_info_to_js(&info)?);
            }
            (CallKind::Schema, M::Schema { schema, .. }) => {
                return Ok(schema_to_js(schema_from_ipc(&schema)?.as_ref()));
            }
            (CallKind::Action, M::Result { body, .. }) => {
                all.push(&Uint8Array::from(body.as_slice()));
            }
            (
                CallKind::ListActions,
                M::ActionType {
                    name, description, ..
                },
            ) => {
                let action = Object::new();
                set(&action, "type", &name.into());
                set(&action, "description", &description.into());
                all.push(&action);
            }
            _ => {}
        }
    }
    match kind {
        CallKind::FlightInfo => match all.length() {
            1 => Ok(all.get(0)),
            n => Err(Failure::new(
                INTERNAL,
                format!("expected one flightInfo answer, found {n}"),
            )),
        },
        CallKind::Schema => Err(Failure::new(
            INTERNAL,
            "expected a schema answer, found none",
        )),
        _ => Ok(all.into()),
    }
}
