//! The options objects of `FlightClient`: read field by field, since they hold functions,
//! an `AbortSignal` and constructors that serde cannot carry.

use js_sys::{Array, Function, Reflect};
use wasm_bindgen::prelude::*;
use web_sys::AbortSignal;

use super::super::error::{usage, WasmResult};
use super::super::options::{bool_field, shown};
use crate::flight::client::connect::protocols;
use crate::flight::client::Credentials;

#[wasm_bindgen(typescript_custom_section)]
const OPTIONS_TS: &str = r#"
/** Options of `FlightClient.connect`. */
export interface ConnectOptions {
  /** Bearer token: checked by a gateway run with `--token`, and sent upstream. */
  token?: string;
  /**
   * Basic auth, instead of `token`: the gateway exchanges the username and password for
   * the bearer token the server returns (a Handshake), and the connection's calls carry
   * it. `connect` resolves once the server has accepted them.
   */
  username?: string;
  password?: string;
  /** More WebSocket subprotocols to offer after `quiver-flight.v1`. */
  protocols?: string[];
  /**
   * The WebSocket class to use; by default `globalThis.WebSocket`. Node 20 has none:
   * pass `(await import('ws')).WebSocket`.
   */
  WebSocket?: new (url: string, protocols: string[]) => WebSocket;
  /**
   * Aborting gives up on a connection still waiting for the gateway's `hello`, which
   * otherwise waits as long as the socket stays open; e.g. `AbortSignal.timeout(10_000)`.
   * Once connected, the signal is not watched.
   */
  signal?: AbortSignal;
}
/** Options of `doGet`. */
export interface DoGetOptions {
  /** Aborting cancels the stream; the upstream call is cancelled too. */
  signal?: AbortSignal;
  /** Called after each frame, with what has arrived so far. */
  onProgress?: (progress: FlightProgress) => void;
  /** Where to read a bare ticket; an endpoint's locations are tried in turn otherwise. */
  location?: string;
  /** Bytes the gateway may send ahead of consumption; default the gateway's window (8 MiB). */
  creditWindow?: number;
}
/** Options of `pollFlightInfo`. */
export interface CallOptions {
  /**
   * Aborting rejects the call with a `FlightError` (code 1, CANCELLED) and cancels its
   * upstream call.
   */
  signal?: AbortSignal;
}
/** Options of `fetchAll`. */
export interface FetchAllOptions {
  signal?: AbortSignal;
  /** Endpoints read at once (default: all of them). */
  concurrency?: number;
  /** Read endpoints one after another, in order. */
  ordered?: boolean;
  /** Sockets to spread the endpoints over (default 1); extra ones are closed after. */
  connections?: number;
  creditWindow?: number;
}
"#;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(typescript_type = "ConnectOptions")]
    pub type ConnectOptionsJs;
    #[wasm_bindgen(typescript_type = "DoGetOptions")]
    pub type DoGetOptionsJs;
    #[wasm_bindgen(typescript_type = "FetchAllOptions")]
    pub type FetchAllOptionsJs;
    #[wasm_bindgen(typescript_type = "CallOptions")]
    pub type CallOptionsJs;
}

fn field(options: &JsValue, key: &str) -> JsValue {
    if options.is_object() {
        Reflect::get(options, &key.into()).unwrap_or(JsValue::UNDEFINED)
    } else {
        JsValue::UNDEFINED
    }
}

fn typed<T: JsCast>(options: &JsValue, key: &str, expected: &str) -> WasmResult<Option<T>> {
    let value = field(options, key);
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    value
        .dyn_into::<T>()
        .map(Some)
        .map_err(|_| usage(format!("option {key} must be {expected}")))
}

fn string(options: &JsValue, key: &str) -> WasmResult<Option<String>> {
    let value = field(options, key);
    match (value.is_undefined(), value.as_string()) {
        (true, _) => Ok(None),
        (false, Some(s)) => Ok(Some(s)),
        (false, None) => Err(usage(format!("option {key} must be a string"))),
    }
}

fn count(options: &JsValue, key: &str) -> WasmResult<Option<u64>> {
    let value = field(options, key);
    if value.is_undefined() {
        return Ok(None);
    }
    match value.as_f64() {
        Some(n) if n >= 1.0 && n.fract() == 0.0 && n <= (1u64 << 40) as f64 => Ok(Some(n as u64)),
        _ => Err(usage(format!(
            "option {key} must be a whole number from 1 to 2^40, found {}",
            shown(&value)
        ))),
    }
}

pub(super) struct Connect {
    pub credentials: Credentials,
    pub protocols: Vec<String>,
    pub constructor: Option<Function>,
    pub signal: Option<AbortSignal>,
}

pub(super) fn connect_options(options: &JsValue) -> WasmResult<Connect> {
    let token = string(options, "token")?;
    let (username, password) = (string(options, "username")?, string(options, "password")?);
    let credentials = Credentials::new(token, username, password).map_err(usage)?;
    let mut extra = Vec::new();
    if let Some(array) = typed::<Array>(options, "protocols", "an array of strings")? {
        for p in array.iter() {
            let p = p.as_string();
            extra.push(p.ok_or_else(|| usage("option protocols must be an array of strings"))?);
        }
    }
    let constructor = typed::<Function>(options, "WebSocket", "a WebSocket class")?;
    Ok(Connect {
        credentials,
        protocols: protocols(extra),
        constructor,
        signal: typed(options, "signal", "an AbortSignal")?,
    })
}

pub(super) struct Get {
    pub signal: Option<AbortSignal>,
    pub on_progress: Option<Function>,
    pub location: Option<String>,
    pub credit_window: Option<u64>,
}

pub(super) fn get_options(options: &JsValue) -> WasmResult<Get> {
    Ok(Get {
        signal: typed(options, "signal", "an AbortSignal")?,
        on_progress: typed(options, "onProgress", "a function")?,
        location: string(options, "location")?,
        credit_window: count(options, "creditWindow")?,
    })
}

/// The `signal` of a call's options.
pub(super) fn call_signal(options: &JsValue) -> WasmResult<Option<AbortSignal>> {
    typed(options, "signal", "an AbortSignal")
}

pub(super) struct Fetch {
    pub signal: Option<AbortSignal>,
    pub concurrency: Option<u64>,
    pub ordered: bool,
    pub connections: u64,
    pub credit_window: Option<u64>,
}

pub(super) fn fetch_options(options: &JsValue) -> WasmResult<Fetch> {
    Ok(Fetch {
        signal: typed(options, "signal", "an AbortSignal")?,
        concurrency: count(options, "concurrency")?,
        ordered: bool_field(Some(options), "ordered")?.unwrap_or(false),
        connections: count(options, "connections")?.unwrap_or(1),
        credit_window: count(options, "creditWindow")?,
    })
}
