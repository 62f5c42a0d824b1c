//! What the answer of a call answered by a few control messages and a status
//! ([`Answer`]) becomes in JavaScript.

use js_sys::{Array, Uint8Array};
use wasm_bindgen::prelude::*;

use super::super::object::object;
use super::super::schema::schema_to_js;
use super::info::{flight_info_to_js, poll_info_to_js};
use crate::flight::client::answers::Item;
use crate::flight::client::{Answer, Failure};

/// The value the call's promise resolves with: the one item, or an array of them.
pub(super) fn answer_to_js(answer: Answer) -> Result<JsValue, Failure> {
    match answer {
        Answer::One(item) => item_to_js(item),
        Answer::List(items) => {
            let all = Array::new();
            for item in items {
                all.push(&item_to_js(item)?);
            }
            Ok(all.into())
        }
    }
}

fn item_to_js(item: Item) -> Result<JsValue, Failure> {
    Ok(match item {
        Item::FlightInfo(info) => flight_info_to_js(&info)?,
        Item::Poll(poll) => poll_info_to_js(&poll)?,
        Item::Schema(schema) => schema_to_js(&schema),
        Item::Bytes(bytes) => Uint8Array::from(bytes.as_slice()).into(),
        Item::ActionType { name, description } => {
            object(&[("type", name.into()), ("description", description.into())])
        }
    })
}
