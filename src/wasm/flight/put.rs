//! DoPut: `PutStream`, the object JavaScript writes batches to, over an upload the
//! connection's [`Client`](crate::flight::client::Client) keeps.

use std::rc::Rc;

use js_sys::Promise;
use wasm_bindgen::prelude::*;

use super::super::batch::RecordBatch;
use super::super::error::WasmResult;
use super::conn::{run, with_client, Owner};
use super::deferred::Deferred;
use super::error::to_js;
use crate::flight::client::{Actions, ClientError, PutStream as CorePut};
use crate::flight::control::Descriptor;

/// An open DoPut: write batches, then `finish()` for the server's PutResults.
///
/// Batches are encoded at once into chunks of their exact size and sent as the gateway
/// grants credit; `write` resolves when the batch's last frame is sent, so awaiting it
/// keeps at most one batch in memory. The batches stay yours, and so do the
/// `app_metadata` arrays (copied in when called).
///
/// ```js
/// const put = client.startPut({ path: ['uploads', 'today'] });
/// for (const batch of batches) await put.write(batch);
/// await put.write(last, new TextEncoder().encode('page 7')); // with app_metadata
/// await put.writeMetadata(new TextEncoder().encode('done')); // app_metadata alone
/// const results = await put.finish(); // Uint8Array[]: each PutResult's app_metadata
/// ```
#[wasm_bindgen]
pub struct PutStream {
    /// An upload keeps its connection open until it is freed.
    owner: Rc<Owner>,
    id: u32,
}

impl PutStream {
    /// Starts a DoPut to `descriptor`. A stream that could not start fails at its first
    /// `write()`.
    pub(super) fn open(owner: Rc<Owner>, descriptor: Descriptor) -> Self {
        let conn = &owner.conn;
        let id = conn.borrow_mut().client.open_put(descriptor);
        conn.borrow_mut().register_put(id, Rc::clone(&owner));
        run(conn);
        PutStream { owner, id }
    }

    /// Writes `batch` with `app_metadata`, or `app_metadata` alone; the promise resolves
    /// once what was written is sent.
    fn send(&self, batch: Option<&RecordBatch>, app_metadata: Vec<u8>) -> WasmResult<Promise> {
        let write = |put: &mut CorePut, out: &mut Actions| match batch {
            Some(b) => put.write(b.as_arrow(), b.metadata_ref(), app_metadata, out),
            None => put.write_metadata(app_metadata, out),
        };
        let conn = &self.owner.conn;
        let written = conn
            .borrow_mut()
            .client
            .put_mut(self.id)
            .and_then(|(put, out)| write(put, out).map(|()| put.is_sent()));
        let promise = match written {
            Ok(true) => Promise::resolve(&JsValue::UNDEFINED),
            Ok(false) => {
                let (promise, waiter) = Deferred::new();
                conn.borrow_mut().wait_sent(self.id, waiter);
                promise
            }
            Err(ClientError::PutFailed(failure)) => Promise::reject(&to_js(&failure)),
            Err(e) => {
                run(conn);
                return Err(e.into());
            }
        };
        run(conn);
        Ok(promise)
    }
}

impl Drop for PutStream {
    fn drop(&mut self) {
        // Freed (or collected) before `finish()`; after it, the pending promise carries
        // the upload to its end.
        let conn = &self.owner.conn;
        if let Ok(mut c) = conn.try_borrow_mut() {
            c.client.release(self.id);
        } else {
            return;
        }
        run(conn);
    }
}

#[wasm_bindgen]
impl PutStream {
    /// Encodes `batch` (the first one decides the schema) and sends it as credit allows,
    /// with `appMetadata` in its message's `FlightData` (after any dictionaries'), as
    /// pyarrow's `write_with_metadata` does. Resolves once it is sent; rejects with a
    /// `FlightError` if the upload failed.
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn write(
        &self,
        batch: &RecordBatch,
        #[wasm_bindgen(js_name = appMetadata)] app_metadata: Option<Vec<u8>>,
    ) -> WasmResult<Promise> {
        self.send(Some(batch), app_metadata.unwrap_or_default())
    }

    /// Sends `appMetadata` alone, as a `FlightData` without data, after the batches
    /// written before; resolves once it is sent. Needs a `write()` first (the schema
    /// goes before it), and at least one byte (an empty `FlightData` ends the upload for
    /// Arrow C++ servers).
    #[wasm_bindgen(js_name = writeMetadata, unchecked_return_type = "Promise<void>")]
    pub fn write_metadata(
        &self,
        #[wasm_bindgen(js_name = appMetadata)] app_metadata: Vec<u8>,
    ) -> WasmResult<Promise> {
        self.send(None, app_metadata)
    }

    /// Ends the upload and resolves with the `app_metadata` of each PutResult.
    #[wasm_bindgen(unchecked_return_type = "Promise<Uint8Array[]>")]
    pub fn finish(&self) -> WasmResult<Promise> {
        let conn = &self.owner.conn;
        let finishing = conn
            .borrow_mut()
            .client
            .put_mut(self.id)
            .and_then(|(put, out)| put.finish_upload(out));
        match finishing {
            Ok(()) => {}
            // The upload failed before: the call rejects as its write() did.
            Err(ClientError::PutFailed(failure)) => return Ok(Promise::reject(&to_js(&failure))),
            Err(e) => {
                run(conn);
                return Err(e.into());
            }
        }
        let (promise, waiter) = Deferred::new();
        conn.borrow_mut().wait_finished(self.id, waiter);
        run(conn);
        Ok(promise)
    }

    /// Abandons the upload; the server's call is cancelled, never completed with part of it.
    pub fn cancel(&self) {
        with_client(&self.owner.conn, |c| c.cancel(self.id));
    }
}
