//! Flight SQL in JSON: the browser names Flight SQL commands and actions in JSON, and the
//! gateway encodes them as Flight SQL's protobuf messages (arrow-flight's `sql` types)
//! and decodes their results back to JSON. The wasm client thus carries no protobuf code
//! (docs/protocol.md, "Flight SQL").
//!
//! - A descriptor `{"sql": {"type": "statementQuery", "query": "..."}}` becomes the
//!   command descriptor of that `Command*` message, packed in an `Any`.
//! - A DoPut to such a descriptor answers each `PutResult` with the JSON of its
//!   `DoPutUpdateResult` or `DoPutPreparedStatementResult`, as UTF-8 in `appMetadata`.
//! - An action whose type starts with `sql.` takes a JSON body and answers JSON bodies.

pub(crate) mod action;
pub(crate) mod command;

use arrow_flight::sql::{Any, ProstMessageExt};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use prost::Message;
use tonic::Status;

/// Decodes a protobuf message the server sent, or says which one did not decode. `what`
/// names it with its article: "a DoPutUpdateResult".
pub(crate) fn decode<M: Message + Default>(bytes: &[u8], what: &str) -> Result<M, Status> {
    M::decode(bytes).map_err(|e| {
        Status::internal(format!(
            "expected {what} from the server, found {} bytes that do not decode: {e}",
            bytes.len()
        ))
    })
}

/// Decodes the `Any` the server sent and unpacks the message `what` names from it, or says
/// what the `Any` held instead.
fn unpack<M: ProstMessageExt>(bytes: &[u8], what: &str) -> Result<M, Status> {
    let any = decode::<Any>(bytes, &format!("{what} in an Any"))?;
    match any.unpack::<M>() {
        Ok(Some(message)) => Ok(message),
        Ok(None) => Err(Status::internal(format!(
            "expected {what} from the server, found an Any of {}",
            any.type_url
        ))),
        Err(e) => Err(Status::internal(format!(
            "expected {what} from the server, found an Any of its type whose {} bytes do \
             not decode: {e}",
            any.value.len()
        ))),
    }
}

/// The bytes of a base64 field of the browser's JSON.
fn from_base64(text: &str, field: &str) -> Result<Vec<u8>, Status> {
    STANDARD
        .decode(text)
        .map_err(|e| Status::invalid_argument(format!("{field} must be base64: {e}")))
}
