//! Calls answered by a few control messages and a status (Handshake, GetFlightInfo,
//! PollFlightInfo, ListFlights, GetSchema, DoAction, ListActions):
//! what their messages become once the call ends.

use js_sys::{Array, Object, Uint8Array};
use wasm_bindgen::prelude::*;

use super::super::object::set;
use super::super::schema::schema_to_js;
use super::info::{flight_info_to_js, poll_info_to_js};
use crate::flight::client::answers::schema_from_ipc;
use crate::flight::client::status::INTERNAL;
use crate::flight::client::{Failure, PollInfo};
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
    /// Every `handshake` payload, as an array of `Uint8Array`.
    Handshake,
    /// Every `actionType`, as `{ type, description }`.
    ListActions,
    /// The one `pollInfo`, checked by [`PollInfo::from_answer`].
    Poll,
}

/// The value the call's promise resolves with.
pub(super) fn answer(kind: CallKind, messages: Vec<ServerMessage>) -> Result<JsValue, Failure> {
    use ServerMessage as M;
    if let CallKind::Poll = kind {
        return poll_info_to_js(&PollInfo::from_answer(messages)?);
    }
    let all = Array::new();
    for message in messages {
        match (kind, message) {
            (CallKind::ListFlights | CallKind::FlightInfo, M::FlightInfo { info, .. }) => {
                all.push(&flight_info_to_js(&info)?);
            }
            (CallKind::Schema, M::Schema { schema, .. }) => {
                return Ok(schema_to_js(schema_from_ipc(&schema)?.as_ref()));
            }
            (CallKind::Action, M::Result { body, .. })
            | (CallKind::Handshake, M::Handshake { payload: body, .. }) => {
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
