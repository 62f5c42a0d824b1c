//! `FlightClient`: the JavaScript face of a connection to `quiver-gateway`.

use std::rc::Rc;

use js_sys::{Promise, Uint8Array};
use wasm_bindgen::prelude::*;
use web_sys::AbortSignal;

use super::super::error::WasmResult;
use super::conn::{cancel_on_abort, close, run, Conn, Owner, Params};
use super::deferred::{promise, Deferred};
use super::error::{js_message, to_js};
use super::fetch::fetch_all;
use super::get::{open_get, FlightStream};
use super::info::{descriptor_from_js, endpoints_from_js, ticket_from_js};
use super::options::{
    call_signal, connect_options, fetch_options, get_options, CallOptionsJs, ConnectOptionsJs,
    DoGetOptionsJs, FetchAllOptionsJs,
};
use super::put::PutStream;
use crate::flight::client::status::{CANCELLED, INVALID_ARGUMENT};
use crate::flight::client::{CallKind, Failure};
use crate::flight::control::ClientMessage;

/// A connection to `quiver-gateway`, which speaks Arrow Flight to real Flight servers.
///
/// One socket carries many calls at once. Calls reject with a `FlightError` (`code` is the
/// Flight status code). `close()` ends every open call; freeing the client does too, once
/// no stream it opened is still held.
///
/// ```js
/// import init, { FlightClient } from 'quiver-arrow';
/// await init();
/// const client = await FlightClient.connect('ws://127.0.0.1:8080/flight', { token });
/// // or, with basic auth: { username, password }
/// const info = await client.getFlightInfo({ path: ['sales', '2024'] });
/// using table = await client.fetchAll(info);
/// client.close();
/// ```
///
/// In Node 20, which has no global `WebSocket`, pass the `ws` package's class:
///
/// ```js
/// import { WebSocket } from 'ws';
/// const client = await FlightClient.connect(url, { WebSocket });
/// ```
#[wasm_bindgen]
pub struct FlightClient {
    owner: Rc<Owner>,
}

impl FlightClient {
    /// A call answered by control messages and a status; the client numbers `request`.
    /// `signal` aborting cancels it.
    fn call(&self, kind: CallKind, request: ClientMessage, signal: Option<AbortSignal>) -> Promise {
        let (promise, done) = Deferred::new();
        let conn = &self.owner.conn;
        let opened = conn.borrow_mut().client.call(request);
        let id = match opened {
            Ok(id) => id,
            Err(failure) => {
                done.reject(&failure);
                return promise;
            }
        };
        conn.borrow_mut()
            .register_call(id, kind, done, Rc::clone(&self.owner));
        run(conn);
        cancel_on_abort(conn, id, signal);
        promise
    }
}

fn invalid(e: JsError) -> JsValue {
    let message = JsValue::from(e);
    to_js(&Failure::new(INVALID_ARGUMENT, js_message(&message)))
}

#[wasm_bindgen]
impl FlightClient {
    /// Opens a WebSocket to a gateway (`ws://HOST:PORT/flight`) and waits for its `hello`.
    /// Rejects with a `FlightError` (code 14, UNAVAILABLE) if the gateway refuses the
    /// connection, for instance because the page's Origin is not allowed.
    #[wasm_bindgen(unchecked_return_type = "Promise<FlightClient>")]
    pub fn connect(url: String, options: Option<ConnectOptionsJs>) -> Promise {
        let options = options.map(JsValue::from).unwrap_or(JsValue::UNDEFINED);
        promise(async move {
            let o = connect_options(&options).map_err(invalid)?;
            let params = Params {
                url,
                protocols: o.protocols,
                constructor: o.constructor,
                credentials: o.credentials,
            };
            let owner = Conn::connect(params, o.signal)
                .await
                .map_err(|f| to_js(&f))?;
            Ok(FlightClient { owner }.into())
        })
    }

    /// Runs a Handshake: sends `payload` (empty if absent) and resolves with the payload
    /// of each response. A server whose authentication works this way (pyarrow's
    /// `ServerAuthHandler`) answers here; for basic auth, give `connect` a username and
    /// password instead.
    ///
    /// ```js
    /// const [answer] = await client.handshake(new TextEncoder().encode('hello'));
    /// ```
    #[wasm_bindgen(unchecked_return_type = "Promise<Uint8Array[]>")]
    pub fn handshake(&self, payload: Option<Uint8Array>) -> Promise {
        let payload = payload.map(|p| p.to_vec()).unwrap_or_default();
        self.call(
            CallKind::Handshake,
            ClientMessage::Handshake { stream: 0, payload },
            None,
        )
    }

    /// Every flight the server lists, as `FlightInfo`s. `criteria` is passed through.
    ///
    /// ```js
    /// for (const info of await client.listFlights()) console.log(info.descriptor);
    /// ```
    #[wasm_bindgen(js_name = listFlights, unchecked_return_type = "Promise<FlightInfo[]>")]
    pub fn list_flights(&self, criteria: Option<Uint8Array>) -> Promise {
        let criteria = criteria.map(|c| c.to_vec()).unwrap_or_default();
        self.call(
            CallKind::ListFlights,
            ClientMessage::ListFlights {
                stream: 0,
                criteria,
            },
            None,
        )
    }

    /// The `FlightInfo` of a descriptor: its schema and the endpoints holding its parts.
    ///
    /// Aborting `signal` rejects with `CANCELLED` and cancels the upstream call (a query
    /// being planned, say).
    ///
    /// ```js
    /// const info = await client.getFlightInfo({ cmd: 'SELECT 1' }, { signal });
    /// ```
    #[wasm_bindgen(js_name = getFlightInfo, unchecked_return_type = "Promise<FlightInfo>")]
    pub fn get_flight_info(
        &self,
        #[wasm_bindgen(unchecked_param_type = "FlightDescriptor")] descriptor: JsValue,
        options: Option<CallOptionsJs>,
    ) -> WasmResult<Promise> {
        let descriptor = descriptor_from_js(&descriptor)?;
        let signal = call_signal(&options.map(JsValue::from).unwrap_or(JsValue::UNDEFINED))?;
        Ok(self.call(
            CallKind::FlightInfo,
            ClientMessage::GetFlightInfo {
                stream: 0,
                descriptor,
            },
            signal,
        ))
    }

    /// Starts or polls a long-running query (PollFlightInfo): where it stands, as a
    /// `PollInfo`. Poll its `descriptor` again until it is absent; `info` then holds every
    /// endpoint, and its endpoints so far can be read before. A server may wait for news
    /// before it answers a poll; aborting `signal` rejects with `CANCELLED` and cancels
    /// the upstream call.
    ///
    /// ```js
    /// let poll = await client.pollFlightInfo({ cmd: 'SELECT ...' });
    /// while (poll.descriptor) {
    ///   show(poll.progress);
    ///   poll = await client.pollFlightInfo(poll.descriptor, { signal });
    /// }
    /// using table = await client.fetchAll(poll.info);
    /// ```
    #[wasm_bindgen(js_name = pollFlightInfo, unchecked_return_type = "Promise<PollInfo>")]
    pub fn poll_flight_info(
        &self,
        #[wasm_bindgen(unchecked_param_type = "FlightDescriptor")] descriptor: JsValue,
        options: Option<CallOptionsJs>,
    ) -> WasmResult<Promise> {
        let descriptor = descriptor_from_js(&descriptor)?;
        let signal = call_signal(&options.map(JsValue::from).unwrap_or(JsValue::UNDEFINED))?;
        let request = ClientMessage::PollFlightInfo {
            stream: 0,
            descriptor,
        };
        Ok(self.call(CallKind::Poll, request, signal))
    }

    /// The schema of a descriptor, decoded.
    #[wasm_bindgen(js_name = getSchema, unchecked_return_type = "Promise<Schema>")]
    pub fn get_schema(
        &self,
        #[wasm_bindgen(unchecked_param_type = "FlightDescriptor")] descriptor: JsValue,
    ) -> WasmResult<Promise> {
        let descriptor = descriptor_from_js(&descriptor)?;
        Ok(self.call(
            CallKind::Schema,
            ClientMessage::GetSchema {
                stream: 0,
                descriptor,
            },
            None,
        ))
    }

    /// Reads one ticket (bytes, a string, or an endpoint of a `FlightInfo`) as a stream of
    /// batches. Errors, including a failure to send, arrive through the stream. A message's
    /// metadata and body are each allocated at their declared size as their length
    /// arrives; one that would take what the module's open DoGets hold for messages still
    /// arriving past 1 GiB fails its stream with `RESOURCE_EXHAUSTED`.
    ///
    /// ```js
    /// const controller = new AbortController();
    /// const stream = client.doGet(info.endpoints[0], { signal: controller.signal });
    /// for await (const batch of stream) { draw(batch); batch.free(); }
    /// using table = await client.doGet('rows=1000').readAll();
    /// ```
    #[wasm_bindgen(js_name = doGet)]
    pub fn do_get(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Ticket")] ticket: JsValue,
        options: Option<DoGetOptionsJs>,
    ) -> WasmResult<FlightStream> {
        let options = get_options(&options.map(JsValue::from).unwrap_or(JsValue::UNDEFINED))?;
        let (ticket, endpoint_locations) = ticket_from_js(&ticket)?;
        let locations = options.location.map_or(endpoint_locations, |l| vec![l]);
        let stream = open_get(
            &self.owner,
            ticket,
            locations,
            options.credit_window,
            options.signal,
            options.on_progress,
        );
        Ok(FlightStream::new(stream))
    }

    /// Reads every endpoint of `info` into one `Table` (yours to `free()`), endpoint by
    /// endpoint in order of the FlightInfo. Endpoints are read in parallel unless
    /// `ordered`; `connections` spreads them over that many sockets. If one fails, the
    /// others are cancelled and the promise rejects with its `FlightError`.
    ///
    /// ```js
    /// using table = await client.fetchAll(info, { concurrency: 4, connections: 4 });
    /// ```
    #[wasm_bindgen(js_name = fetchAll, unchecked_return_type = "Promise<Table>")]
    pub fn fetch_all(
        &self,
        #[wasm_bindgen(unchecked_param_type = "FlightInfo")] info: JsValue,
        options: Option<FetchAllOptionsJs>,
    ) -> WasmResult<Promise> {
        let options = fetch_options(&options.map(JsValue::from).unwrap_or(JsValue::UNDEFINED))?;
        let (endpoints, raw_schema) = endpoints_from_js(&info)?;
        let owner = Rc::clone(&self.owner);
        Ok(promise(fetch_all(owner, endpoints, raw_schema, options)))
    }

    /// Starts an upload to `descriptor`; see `PutStream`. `doPut` is the one-call form.
    #[wasm_bindgen(js_name = startPut)]
    pub fn start_put(
        &self,
        #[wasm_bindgen(unchecked_param_type = "FlightDescriptor")] descriptor: JsValue,
    ) -> WasmResult<PutStream> {
        let descriptor = descriptor_from_js(&descriptor)?;
        Ok(PutStream::open(Rc::clone(&self.owner), descriptor))
    }

    /// Runs an action; resolves with the body of each result. Aborting `signal` rejects
    /// with `CANCELLED` and cancels the upstream call.
    ///
    /// ```js
    /// const [body] = await client.doAction('refresh', new TextEncoder().encode('{}'));
    /// ```
    #[wasm_bindgen(js_name = doAction, unchecked_return_type = "Promise<Uint8Array[]>")]
    pub fn do_action(
        &self,
        action: String,
        body: Option<Uint8Array>,
        options: Option<CallOptionsJs>,
    ) -> WasmResult<Promise> {
        let body = body.map(|b| b.to_vec()).unwrap_or_default();
        let signal = call_signal(&options.map(JsValue::from).unwrap_or(JsValue::UNDEFINED))?;
        Ok(self.call(
            CallKind::Action,
            ClientMessage::DoAction {
                stream: 0,
                action,
                body,
            },
            signal,
        ))
    }

    /// The actions the server offers, as `{ type, description }`.
    #[wasm_bindgen(
        js_name = listActions,
        unchecked_return_type = "Promise<{ type: string; description: string }[]>"
    )]
    pub fn list_actions(&self) -> Promise {
        self.call(
            CallKind::ListActions,
            ClientMessage::ListActions { stream: 0 },
            None,
        )
    }

    /// Closes the socket. Open calls reject with a `FlightError` (code 1, CANCELLED), and
    /// the gateway cancels their upstream calls.
    pub fn close(&self) {
        close(
            &self.owner.conn,
            Failure::new(CANCELLED, "the client closed the connection"),
        );
    }
}
