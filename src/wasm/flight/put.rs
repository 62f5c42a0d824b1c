//! DoPut: `PutState`, one upload as the connection sees it, and `PutStream`, the object
//! JavaScript writes batches to. Batches are encoded by the right-sized writer with
//! chunks capped at the gateway's segment size, so each chunk becomes one frame (or
//! several, when the credit left is smaller), and frames are sent only against credit.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use js_sys::{Array, Promise, Uint8Array};
use wasm_bindgen::prelude::*;
use web_sys::WebSocket;

use super::super::batch::RecordBatch;
use super::super::error::{usage, WasmResult};
use super::conn::{send, ConnRef};
use super::deferred::Deferred;
use super::error::{Failure, CANCELLED, DATA_LOSS};
use crate::flight::control::ClientMessage;
use crate::flight::frame::{encode_header, Flags, FrameKind, HEADER_LEN};
use crate::ipc::{Chunks, StreamEncoder, WriteOptions};

/// Chunks not yet sent, from `chunk` and `offset` on.
struct Pending {
    chunks: Chunks,
    chunk: usize,
    offset: usize,
}

pub(super) struct PutState {
    id: u32,
    ws: Option<WebSocket>,
    max_segment: usize,
    encoder: Option<StreamEncoder>,
    credit: u64,
    pending: VecDeque<Pending>,
    /// Settled once everything written so far has been sent.
    drained: Vec<Deferred>,
    /// After `finish()`: `end` goes out once the pending bytes are sent.
    ending: bool,
    /// Whether `end` went out: the upload is whole only then.
    end_sent: bool,
    results: Vec<Vec<u8>>,
    done: Option<Result<(), Failure>>,
    finished: Option<Deferred>,
}

impl PutState {
    pub fn new(id: u32, ws: Option<WebSocket>, max_segment: usize) -> Self {
        PutState {
            id,
            ws,
            max_segment,
            encoder: None,
            credit: 0,
            pending: VecDeque::new(),
            drained: Vec::new(),
            ending: false,
            end_sent: false,
            results: Vec::new(),
            done: None,
            finished: None,
        }
    }

    pub fn failed(failure: Failure) -> Self {
        let mut state = PutState::new(0, None, 1);
        state.done = Some(Err(failure));
        state
    }

    pub fn grant(&mut self, bytes: u64) {
        self.credit = self.credit.saturating_add(bytes);
        self.pump();
    }

    pub fn result(&mut self, app_metadata: Vec<u8>) {
        self.results.push(app_metadata);
    }

    /// Sends frames while there is credit and something to send.
    fn pump(&mut self) {
        let Some(ws) = self.ws.clone() else { return };
        while self.credit > 0 && self.done.is_none() {
            let Some(p) = self.pending.front_mut() else {
                break;
            };
            let Some(chunk) = p.chunks.chunk(p.chunk) else {
                self.pending.pop_front();
                continue;
            };
            let n = (chunk.len() - p.offset)
                .min(self.max_segment)
                .min(usize::try_from(self.credit).unwrap_or(usize::MAX));
            // A chunk never spans two messages; each write's first chunk starts one.
            let flags = Flags {
                first: p.offset == 0 && (p.chunk == 0 || p.chunks.ends_message(p.chunk - 1)),
                last: p.offset + n == chunk.len() && p.chunks.ends_message(p.chunk),
            };
            // Built in JS memory: `ws` in Node sends later from the buffer it is given, so
            // a view of wasm memory could change before it goes out.
            let frame = Uint8Array::new_with_length((HEADER_LEN + n) as u32);
            let header = encode_header(self.id, FrameKind::Data, flags, 0);
            frame.subarray(0, HEADER_LEN as u32).copy_from(&header);
            frame
                .subarray(HEADER_LEN as u32, (HEADER_LEN + n) as u32)
                .copy_from(&chunk[p.offset..p.offset + n]);
            if ws.send_with_array_buffer_view(&frame).is_err() {
                // The socket is closing; its close event fails the stream.
                return;
            }
            self.credit -= n as u64;
            p.offset += n;
            if p.offset == chunk.len() {
                p.chunk += 1;
                p.offset = 0;
            }
        }
        if self.pending.is_empty() {
            for waiter in self.drained.drain(..) {
                waiter.resolve(&JsValue::UNDEFINED);
            }
            if std::mem::take(&mut self.ending) {
                self.end_sent = send(&ws, &ClientMessage::End { stream: self.id }).is_ok();
            }
        }
    }

    fn check_open(&self) -> WasmResult<()> {
        match (&self.done, self.ending || self.finished.is_some()) {
            (Some(Err(f)), _) => Err(usage(format!("the upload failed: {}", f.message))),
            (Some(Ok(())), _) | (None, true) => Err(usage("the upload is finished")),
            (None, false) => Ok(()),
        }
    }

    fn queue(&mut self, chunks: Chunks) {
        self.pending.push_back(Pending {
            chunks,
            chunk: 0,
            offset: 0,
        });
        self.pump();
    }

    /// Resolves once everything queued so far is sent.
    fn sent(&mut self) -> Promise {
        if self.pending.is_empty() {
            return Promise::resolve(&JsValue::UNDEFINED);
        }
        let (promise, waiter) = Deferred::new();
        self.drained.push(waiter);
        promise
    }

    fn write(&mut self, batch: &RecordBatch) -> WasmResult<Promise> {
        self.check_open()?;
        let max_segment = self.max_segment;
        let encoder = match &mut self.encoder {
            Some(encoder) => encoder,
            none => none.insert(StreamEncoder::try_new(
                batch.as_arrow().schema(),
                WriteOptions {
                    max_chunk_bytes: max_segment.max(8),
                    ..WriteOptions::default()
                },
            )?),
        };
        let chunks = encoder.write_with_metadata(batch.as_arrow(), batch.metadata_ref())?;
        self.queue(chunks);
        Ok(self.sent())
    }

    fn finish_upload(&mut self) -> WasmResult<Promise> {
        self.check_open()?;
        let encoder = self.encoder.as_mut().ok_or_else(|| {
            usage("write at least one batch before finish(): the schema comes from it")
        })?;
        let chunks = encoder.finish()?;
        let (promise, finished) = Deferred::new();
        self.finished = Some(finished);
        self.ending = true;
        self.queue(chunks);
        Ok(promise)
    }

    /// The status arrived (or the connection failed).
    pub fn finish(&mut self, result: Result<(), Failure>) {
        if self.done.is_some() {
            return;
        }
        // The server may answer OK early, but what was never sent did not arrive.
        let whole = self.end_sent && self.pending.is_empty();
        let result = result.and_then(|()| match whole {
            true => Ok(()),
            false => Err(Failure::new(
                DATA_LOSS,
                "the upload ended with OK before all of it was sent (the batches and the \
                 end of the stream): the server did not get every batch",
            )),
        });
        for waiter in self.drained.drain(..) {
            waiter.settle(result.clone().map(|()| JsValue::UNDEFINED));
        }
        if let Some(finished) = self.finished.take() {
            let results: Array = self
                .results
                .iter()
                .map(|r| JsValue::from(Uint8Array::from(r.as_slice())))
                .collect();
            finished.settle(result.clone().map(|()| results.into()));
        }
        self.pending.clear();
        self.done = Some(result);
    }

    /// Cancels the upload unless `finish()` was called: the handle is gone, so nobody
    /// can end it, and an upload never ended must not stay open on the gateway.
    fn abandon(&mut self) {
        let finishing = self.finished.is_some() || self.ending || self.end_sent;
        if !finishing {
            self.cancel();
        }
    }

    /// Asks the gateway to stop, and ends the upload here with status CANCELLED at once.
    fn cancel(&mut self) {
        if self.done.is_none() {
            if let Some(ws) = &self.ws {
                let _ = send(ws, &ClientMessage::Cancel { stream: self.id });
            }
            self.finish(Err(Failure::new(CANCELLED, "cancelled by the client")));
        }
    }
}

/// An open DoPut: write batches, then `finish()` for the server's PutResults.
///
/// Batches are encoded at once into chunks of their exact size and sent as the gateway
/// grants credit; `write` resolves when the batch's last frame is sent, so awaiting it
/// keeps at most one batch in memory. The batches stay yours.
///
/// ```js
/// const put = client.startPut({ path: ['uploads', 'today'] });
/// for (const batch of batches) await put.write(batch);
/// const results = await put.finish(); // Uint8Array[]: each PutResult's app_metadata
/// ```
#[wasm_bindgen]
pub struct PutStream {
    _conn: Option<ConnRef>,
    state: Rc<RefCell<PutState>>,
}

impl PutStream {
    pub(super) fn new(conn: Option<ConnRef>, state: Rc<RefCell<PutState>>) -> Self {
        PutStream { _conn: conn, state }
    }
}

impl Drop for PutStream {
    fn drop(&mut self) {
        // Freed (or collected) before `finish()`; after it, the pending promise carries
        // the upload to its end.
        if let Ok(mut state) = self.state.try_borrow_mut() {
            state.abandon();
        }
    }
}

#[wasm_bindgen]
impl PutStream {
    /// Encodes `batch` (the first one decides the schema) and sends it as credit allows.
    /// Resolves once it is sent; rejects with a `FlightError` if the upload failed.
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn write(&self, batch: &RecordBatch) -> WasmResult<Promise> {
        self.state.borrow_mut().write(batch)
    }

    /// Ends the upload and resolves with the `app_metadata` of each PutResult.
    #[wasm_bindgen(unchecked_return_type = "Promise<Uint8Array[]>")]
    pub fn finish(&self) -> WasmResult<Promise> {
        self.state.borrow_mut().finish_upload()
    }

    /// Abandons the upload; the server's call is cancelled, never completed with part of it.
    pub fn cancel(&self) {
        self.state.borrow_mut().cancel();
    }
}
