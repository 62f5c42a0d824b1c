//! DoGet: `FlightStream`, the object JavaScript iterates, over a stream the connection's
//! [`Client`](crate::flight::client::Client) keeps.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::AbortSignal;

use super::super::batch::table_with_metadata;
use super::super::error::WasmResult;
use super::super::object::object;
use super::super::schema::schema_to_js;
use super::conn::{cancel_on_abort, chunk_to_js, run, CollectSlot, ConnRef, Home, Owner};
use super::deferred::{promise, Deferred};
use super::error::to_js;
use crate::flight::client::status::INTERNAL;
use crate::flight::client::{Actions, ClientError, Collected, Failure, GetStream, Next};

/// A DoGet's home and id; the connection fills the home with the stream when it ends.
pub(super) struct StreamHandle {
    home: Rc<RefCell<Home>>,
    id: u32,
}

impl StreamHandle {
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The connection, while the stream runs on it.
    fn conn(&self) -> Option<ConnRef> {
        match &*self.home.borrow() {
            Home::Conn(conn) => Some(Rc::clone(conn)),
            Home::Ended(_) => None,
        }
    }

    /// Runs `f` on the stream, then does what the client asked for. No borrow of the
    /// home is held meanwhile: the connection may move the stream into it.
    fn with<T>(
        &self,
        f: impl FnOnce(&mut GetStream, &mut Actions) -> Result<T, ClientError>,
    ) -> Result<T, ClientError> {
        let Some(conn) = self.conn() else {
            // An ended stream asks for nothing more.
            return match &mut *self.home.borrow_mut() {
                Home::Ended(get) => f(get, &mut Actions::new()),
                Home::Conn(_) => Err(ClientError::Gone(self.id)),
            };
        };
        let result = conn
            .borrow_mut()
            .client
            .get_mut(self.id)
            .and_then(|(get, out)| f(get, out));
        run(&conn);
        result
    }

    fn read<T>(&self, f: impl FnOnce(&GetStream) -> T) -> Option<T> {
        match &*self.home.borrow() {
            Home::Conn(conn) => conn.borrow().client.get(self.id).map(f),
            Home::Ended(get) => Some(f(get)),
        }
    }
}

/// Starts a DoGet of `ticket` at the first of `locations` that can be read (none: the
/// gateway's upstream). A stream that could not start fails at its first `next()`.
pub(super) fn open_get(
    owner: &Rc<Owner>,
    ticket: Vec<u8>,
    locations: Vec<String>,
    window: Option<u64>,
    signal: Option<AbortSignal>,
    on_progress: Option<Function>,
) -> StreamHandle {
    let conn = &owner.conn;
    let id = conn.borrow_mut().client.open_get(ticket, locations, window);
    let home = Rc::new(RefCell::new(Home::Conn(Rc::clone(conn))));
    conn.borrow_mut()
        .register_get(id, Rc::downgrade(&home), on_progress, Rc::clone(owner));
    run(conn);
    cancel_on_abort(conn, id, signal);
    StreamHandle { home, id }
}

/// What a `readAll()` gets: at once if the stream has ended, otherwise once it does.
pub(super) enum Collecting {
    Now(Collected),
    Later(Promise, CollectSlot),
}

impl Collecting {
    /// Starts gathering every remaining batch of `stream`.
    pub fn start(stream: &StreamHandle) -> WasmResult<Self> {
        Ok(match stream.with(|get, out| get.collect(out))? {
            Some(collected) => Collecting::Now(collected),
            None => {
                let (promise, done) = Deferred::new();
                let slot = CollectSlot::default();
                // Not ended, so still on its connection.
                if let Some(conn) = stream.conn() {
                    conn.borrow_mut()
                        .wait_collected(stream.id, done, Rc::clone(&slot));
                }
                Collecting::Later(promise, slot)
            }
        })
    }

    pub async fn wait(self) -> Collected {
        match self {
            Collecting::Now(collected) => collected,
            Collecting::Later(promise, slot) => {
                let _ = JsFuture::from(promise).await;
                // Filled before the promise resolves.
                slot.take()
                    .unwrap_or_else(|| Err(Failure::new(INTERNAL, "the stream is gone")))
            }
        }
    }
}

/// An open DoGet: an async iterable of `RecordBatch`, read as the frames arrive.
///
/// Batches are decoded as their bytes arrive, and wait in the stream until you take them;
/// taking them grants the gateway more credit, so a slow reader slows the server instead
/// of filling memory. Each batch you take is yours to `free()`. Freeing the stream before
/// its end cancels it. `next()`, `for await` and `readAll()` skip the messages'
/// `app_metadata`; `readChunk()` reads it.
///
/// ```js
/// const stream = client.doGet(ticket, { signal: AbortSignal.timeout(10_000) });
/// for await (const batch of stream) { console.log(batch.numRows); batch.free(); }
/// console.log(stream.stats.bytesCopied === stream.stats.ipcBytesReceived); // true, uncompressed
/// ```
#[wasm_bindgen]
pub struct FlightStream {
    stream: StreamHandle,
}

#[wasm_bindgen(typescript_custom_section)]
const FLIGHT_STREAM_TS: &str = r#"
/** What a DoGet stream has received and decoded. */
export interface FlightStreamStats {
  /** Frame payload bytes (`app_metadata` plus IPC bytes), the bytes credit counts. */
  bytesReceived: number;
  /** IPC bytes received; for an uncompressed stream `bytesCopied` equals this. */
  ipcBytesReceived: number;
  bytesPushed: number;
  /** Bytes the reader copied: each IPC byte once, plus the copies `ReaderStats.bytesCopied` lists. */
  bytesCopied: number;
  messages: number;
  batches: number;
  rows: number;
}
/**
 * What `readChunk()` reads: a batch with its message's `app_metadata`, or `app_metadata`
 * alone (`data: null`) from a metadata-only message, or from a message that decodes to
 * no batch (the schema, a dictionary batch), in stream order.
 */
export interface FlightStreamChunk {
  /** Yours to `free()`. */
  data: RecordBatch | null;
  /** A copy in JS memory (no view of wasm memory); `null` if the batch's message had none. */
  appMetadata: Uint8Array | null;
}
/** Passed to `onProgress` after each frame. */
export interface FlightProgress {
  bytesReceived: number;
  batches: number;
  rows: number;
}
"#;

impl FlightStream {
    pub(super) fn new(stream: StreamHandle) -> Self {
        FlightStream { stream }
    }
}

#[wasm_bindgen]
impl FlightStream {
    /// The next chunk, `{ data, appMetadata }`, or `undefined` at the end of the stream.
    /// Rejects with a `FlightError` if the stream failed, after the chunks that came
    /// before the failure. `next()` and `for await` read chunks with this, and skip
    /// `app_metadata`.
    ///
    /// ```js
    /// for (let c = await stream.readChunk(); c; c = await stream.readChunk()) {
    ///   if (c.appMetadata) console.log(new TextDecoder().decode(c.appMetadata));
    ///   c.data?.free();
    /// }
    /// ```
    #[wasm_bindgen(js_name = readChunk, unchecked_return_type = "Promise<FlightStreamChunk | undefined>")]
    pub fn read_chunk(&self) -> WasmResult<Promise> {
        let promise = match self.stream.with(|get, out| get.next(out))? {
            Next::Chunk(chunk) => Promise::resolve(&chunk_to_js(chunk)),
            Next::End(Ok(())) => Promise::resolve(&JsValue::UNDEFINED),
            Next::End(Err(failure)) => Promise::reject(&to_js(&failure)),
            Next::Wait => {
                let (promise, waiter) = Deferred::new();
                // Not ended, so still on its connection.
                if let Some(conn) = self.stream.conn() {
                    conn.borrow_mut().wait(self.stream.id, waiter);
                }
                promise
            }
        };
        Ok(promise)
    }

    /// Every remaining batch, as one `Table` (yours to `free()`), once the stream ends.
    ///
    /// ```js
    /// using table = await client.doGet('rows=1000').readAll();
    /// ```
    #[wasm_bindgen(js_name = readAll, unchecked_return_type = "Promise<Table>")]
    pub fn read_all(&self) -> WasmResult<Promise> {
        let collecting = Collecting::start(&self.stream)?;
        Ok(promise(async move {
            let (schema, batches) = collecting.wait().await.map_err(|f| to_js(&f))?;
            Ok(table_with_metadata(&schema, batches).into())
        }))
    }

    /// Stops the stream: the gateway cancels the upstream call, and a pending or later
    /// `next()` rejects with a `FlightError` whose code is 1 (CANCELLED).
    pub fn cancel(&self) {
        let _ = self.stream.with(|get, out| {
            get.cancel(out);
            Ok(())
        });
    }

    /// The schema once the first message arrived, otherwise `undefined`.
    #[wasm_bindgen(getter, unchecked_return_type = "Schema | undefined")]
    pub fn schema(&self) -> JsValue {
        let schema = self.stream.read(|get| get.schema().cloned()).flatten();
        schema.map_or(JsValue::UNDEFINED, |s| schema_to_js(&s))
    }

    /// Bytes received, pushed and copied, messages, batches and rows (a new object each time).
    #[wasm_bindgen(getter, unchecked_return_type = "FlightStreamStats")]
    pub fn stats(&self) -> JsValue {
        let Some(s) = self.stream.read(GetStream::stats) else {
            return JsValue::UNDEFINED;
        };
        object(&[
            ("bytesReceived", (s.bytes_received as f64).into()),
            ("ipcBytesReceived", (s.ipc_bytes_received as f64).into()),
            ("bytesPushed", (s.read.bytes_pushed as f64).into()),
            ("bytesCopied", (s.read.bytes_copied as f64).into()),
            ("messages", (s.read.messages as f64).into()),
            ("batches", (s.read.batches as f64).into()),
            ("rows", (s.rows as f64).into()),
        ])
    }

    /// The credit window this stream runs with, in bytes.
    #[wasm_bindgen(getter, js_name = creditWindow)]
    pub fn credit_window(&self) -> f64 {
        self.stream.read(|get| get.window() as f64).unwrap_or(0.0)
    }
}

impl Drop for FlightStream {
    fn drop(&mut self) {
        // Freed (or collected) before its end, with no `next()` or `readAll()` waiting:
        // nobody will read the rest, and the client cancels the stream.
        // An ended stream is its own, and goes with its handle.
        if let Some(conn) = self.stream.conn() {
            if let Ok(mut c) = conn.try_borrow_mut() {
                c.client.release(self.stream.id);
            } else {
                return;
            }
            run(&conn);
        }
    }
}
