//! FlightInfo, descriptors and tickets between their JS shapes and the protocol's types.

use js_sys::{Array, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;

use super::super::error::{usage, WasmResult};
use super::super::object::set;
use super::super::schema::schema_to_js;
use crate::flight::client::answers::schema_from_ipc;
use crate::flight::client::{Failure, PollInfo};
use crate::flight::control::{Descriptor, Endpoint, FlightInfo};

#[wasm_bindgen(typescript_custom_section)]
const INFO_TS: &str = r#"
/**
 * Names a flight: a path, an opaque command (a string is sent as its UTF-8 bytes), or
 * the JSON text of a Flight SQL command for the gateway to encode (what `client.sql`
 * sends; docs/protocol.md, "Flight SQL").
 */
export type FlightDescriptor = { path: string[] } | { cmd: Uint8Array | string } | { sql: string };
/** Where one part of a flight can be read: pass it (or its ticket) to `doGet`. */
export interface FlightEndpoint {
  ticket: Uint8Array;
  /**
   * Where the ticket can be read, tried in order: a location that cannot be reached, or
   * that the gateway does not allow, before any byte arrived is passed over for the
   * next. Empty means the gateway's upstream; the gateway dials only locations it allows.
   */
  locations: string[];
  /** Milliseconds since the Unix epoch, when the server set one. */
  expirationTimeMs?: number;
  appMetadata: Uint8Array;
}
/** A FlightInfo: the schema of a flight and the endpoints that hold its parts. */
export interface FlightInfo {
  /** The decoded schema, or undefined when the server sent none. */
  schema: Schema | undefined;
  /** The encapsulated IPC schema message, as the server sent it. */
  rawSchema: Uint8Array;
  descriptor?: FlightDescriptor;
  endpoints: FlightEndpoint[];
  totalRecords: number;
  totalBytes: number;
  ordered: boolean;
  appMetadata: Uint8Array;
}
/**
 * Where a long-running query stands (`pollFlightInfo`). Poll `descriptor` again until it
 * is absent: the query is then complete and `info` holds all its results.
 */
export type PollInfo = PollInfoRunning | PollInfoComplete;
/** Fields every `PollInfo` may have. */
interface PollInfoCommon {
  /** From 0 to 1, when the server knows it; it may go down as well as up. */
  progress?: number;
  /** Milliseconds since the Unix epoch after which the server may refuse `descriptor`. */
  expirationTimeMs?: number;
}
/** A query still running: poll `descriptor` next. */
export interface PollInfoRunning extends PollInfoCommon {
  /** The descriptor to poll next. */
  descriptor: FlightDescriptor;
  /**
   * The results so far, whole each time (not what was added since the last poll): their
   * endpoints can be read before the query completes.
   */
  info?: FlightInfo;
}
/** A complete query: `info` holds all its results. */
export interface PollInfoComplete extends PollInfoCommon {
  descriptor?: undefined;
  info: FlightInfo;
}
/** A ticket: bytes, a string (sent as UTF-8), or an endpoint of a FlightInfo. */
export type Ticket = Uint8Array | string | FlightEndpoint;
"#;

fn get(source: &JsValue, key: &str) -> JsValue {
    Reflect::get(source, &key.into()).unwrap_or(JsValue::UNDEFINED)
}

/// Bytes from a `Uint8Array`, or the UTF-8 of a string.
fn bytes(value: &JsValue, what: &str) -> WasmResult<Vec<u8>> {
    if let Some(text) = value.as_string() {
        return Ok(text.into_bytes());
    }
    value
        .dyn_ref::<Uint8Array>()
        .map(Uint8Array::to_vec)
        .ok_or_else(|| usage(format!("{what} must be a Uint8Array or a string")))
}

pub(super) fn descriptor_from_js(value: &JsValue) -> WasmResult<Descriptor> {
    let path = get(value, "path");
    if Array::is_array(&path) {
        let parts = Array::from(&path)
            .iter()
            .map(|p| p.as_string())
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| usage("descriptor.path must be an array of strings"))?;
        return Ok(Descriptor::Path(parts));
    }
    let cmd = get(value, "cmd");
    if !cmd.is_undefined() {
        return Ok(Descriptor::Cmd(bytes(&cmd, "descriptor.cmd")?));
    }
    if let Some(sql) = get(value, "sql").as_string() {
        return Ok(Descriptor::Sql(sql));
    }
    Err(usage(
        "a descriptor must be { path: string[] }, { cmd: Uint8Array | string } or { sql: string }",
    ))
}

fn descriptor_to_js(descriptor: &Descriptor) -> JsValue {
    let out = Object::new();
    match descriptor {
        Descriptor::Path(parts) => {
            let path: Array = parts.iter().map(|p| JsValue::from_str(p)).collect();
            set(&out, "path", &path);
        }
        Descriptor::Cmd(cmd) => set(&out, "cmd", &Uint8Array::from(cmd.as_slice())),
        Descriptor::Sql(sql) => set(&out, "sql", &JsValue::from_str(sql)),
    }
    out.into()
}

/// A ticket and the locations to read it at, in turn (none: the gateway's upstream).
pub(super) type Target = (Vec<u8>, Vec<String>);

/// A ticket and the locations to read it at: an endpoint object, or bare ticket bytes
/// (then `location`, if given, says where).
pub(super) fn ticket_from_js(value: &JsValue) -> WasmResult<Target> {
    if value.is_object() && !value.is_instance_of::<Uint8Array>() {
        let ticket = bytes(&get(value, "ticket"), "endpoint.ticket")?;
        let locations = get(value, "locations");
        let locations = match Array::is_array(&locations) {
            true => Array::from(&locations)
                .iter()
                .filter_map(|l| l.as_string())
                .collect(),
            false => Vec::new(),
        };
        return Ok((ticket, locations));
    }
    Ok((bytes(value, "a ticket")?, Vec::new()))
}

fn endpoint_to_js(endpoint: &Endpoint) -> JsValue {
    let out = Object::new();
    set(
        &out,
        "ticket",
        &Uint8Array::from(endpoint.ticket.as_slice()),
    );
    let locations: Array = endpoint
        .locations
        .iter()
        .map(|l| JsValue::from_str(l))
        .collect();
    set(&out, "locations", &locations);
    if let Some(ms) = endpoint.expiration_time_ms {
        set(&out, "expirationTimeMs", &(ms as f64).into());
    }
    set(
        &out,
        "appMetadata",
        &Uint8Array::from(endpoint.app_metadata.as_slice()),
    );
    out.into()
}

pub(super) fn flight_info_to_js(info: &FlightInfo) -> Result<JsValue, Failure> {
    let out = Object::new();
    let schema = match info.schema.is_empty() {
        true => JsValue::UNDEFINED,
        false => schema_to_js(schema_from_ipc(&info.schema)?.as_ref()),
    };
    set(&out, "schema", &schema);
    set(&out, "rawSchema", &Uint8Array::from(info.schema.as_slice()));
    if let Some(d) = &info.descriptor {
        set(&out, "descriptor", &descriptor_to_js(d));
    }
    let endpoints: Array = info.endpoints.iter().map(endpoint_to_js).collect();
    set(&out, "endpoints", &endpoints);
    set(&out, "totalRecords", &(info.total_records as f64).into());
    set(&out, "totalBytes", &(info.total_bytes as f64).into());
    set(&out, "ordered", &info.ordered.into());
    set(
        &out,
        "appMetadata",
        &Uint8Array::from(info.app_metadata.as_slice()),
    );
    Ok(out.into())
}

pub(super) fn poll_info_to_js(poll: &PollInfo) -> Result<JsValue, Failure> {
    let out = Object::new();
    if let Some(info) = &poll.info {
        set(&out, "info", &flight_info_to_js(info)?);
    }
    if let Some(d) = &poll.descriptor {
        set(&out, "descriptor", &descriptor_to_js(d));
    }
    if let Some(progress) = poll.progress {
        set(&out, "progress", &progress.into());
    }
    if let Some(ms) = poll.expiration_time_ms {
        set(&out, "expirationTimeMs", &(ms as f64).into());
    }
    Ok(out.into())
}

/// The endpoints of a FlightInfo object, in order, and its raw schema.
pub(super) fn endpoints_from_js(info: &JsValue) -> WasmResult<(Vec<Target>, Vec<u8>)> {
    let endpoints = get(info, "endpoints");
    if !Array::is_array(&endpoints) {
        return Err(usage(
            "fetchAll expects a FlightInfo with an endpoints array",
        ));
    }
    let endpoints = Array::from(&endpoints)
        .iter()
        .map(|e| ticket_from_js(&e))
        .collect::<WasmResult<Vec<_>>>()?;
    let raw = get(info, "rawSchema");
    let schema = raw
        .dyn_ref::<Uint8Array>()
        .map(Uint8Array::to_vec)
        .unwrap_or_default();
    Ok((endpoints, schema))
}
