//! DoGet: one download as the client keeps it. Each frame's IPC bytes go into the
//! stream's decoder (one copy, into place, by whoever holds the frame); batches go to a
//! waiting reader or wait in a queue, and consuming them is what earns the gateway more
//! credit. What the stream holds counts against the [`Budget`](super::Budget) all DoGets
//! share.
//!
//! A message's `app_metadata` comes in the frame that starts it (the gateway's frames each
//! hold bytes of one message). It goes with the batch the message decodes to; a message
//! that decodes to none (the schema, a dictionary batch) gives it a [`Chunk`] of its own,
//! in order, as does a metadata frame. Arrow C++ drops those of the schema and of
//! dictionaries, and arrow-rs those of dictionaries; here none is lost.

use std::collections::VecDeque;
use std::ops::Range;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use super::budget::Reservation;
use super::locations::Locations;
use super::status::{Failure, DATA_LOSS, INTERNAL, RESOURCE_EXHAUSTED};
use super::{Action, Actions, ClientError, Limits};
use crate::flight::control::ClientMessage;
use crate::flight::credit::{Credit, MAX_BALANCE};
use crate::flight::frame::{FrameKind, Header};
use crate::flight::ProtocolError;
use crate::ipc::{batch_bytes, BatchMetadata, ReadLimits, ReadStats, StreamDecoder};

/// A decoded batch with its message's custom metadata.
pub type ArrowBatch = (RecordBatch, BatchMetadata);

/// What `readChunk()` reads: a batch with its message's `app_metadata`, or `app_metadata`
/// that came without a batch.
#[derive(Debug)]
pub struct Chunk {
    pub batch: Option<ArrowBatch>,
    /// `None` when the batch's message carried none; never `None` without a batch.
    pub app_metadata: Option<Vec<u8>>,
}

/// What `readAll()` gathered: the stream's schema and every batch, or why it failed.
pub type Collected = Result<(SchemaRef, Vec<ArrowBatch>), Failure>;

/// Byte credit as the receiver of a DoGet keeps it: the gateway may send `window` bytes
/// more than were granted back, and bytes are granted back once the batches they made
/// are consumed.
#[derive(Debug)]
struct Window {
    /// What the gateway may still send.
    credit: Credit,
    window: u64,
    /// Grant back in steps of at least this many bytes, so one message per batch at most.
    step: u64,
    /// The largest frame payload: with less credit than this left, the gateway may be
    /// unable to send its next frame.
    max_segment: u64,
    /// Payload bytes received; of those, bytes of batches not yet consumed; bytes granted back.
    received: u64,
    queued: u64,
    returned: u64,
    /// Bytes received since the last batch was decoded: they belong to the next one.
    since_batch: u64,
}

impl Window {
    /// `window` is at most [`MAX_BALANCE`]; the client refuses a larger one.
    fn new(window: u64, max_segment: usize) -> Self {
        Window {
            credit: Credit::new(window.min(MAX_BALANCE)).unwrap_or_default(),
            window,
            step: (window / 4).max(max_segment as u64).min(window),
            max_segment: max_segment as u64,
            received: 0,
            queued: 0,
            returned: 0,
            since_batch: 0,
        }
    }

    /// Counts a frame's payload, which must fit the credit the gateway has. More would let
    /// a gateway fill wasm memory.
    fn receive(&mut self, payload: usize) -> Result<(), ProtocolError> {
        self.credit.spend(payload)?;
        self.received += payload as u64;
        self.since_batch += payload as u64;
        Ok(())
    }

    /// The grant owed now, if it is worth a message: a step's worth; or, once every batch
    /// received was consumed, whatever is owed if the gateway has less than a frame's
    /// credit left. It may then be waiting for a grant smaller than a step, and nothing
    /// else would come.
    fn owed(&mut self) -> Option<u64> {
        let consumed = self.received - self.queued;
        let owed = consumed.saturating_sub(self.returned);
        let stuck = self.queued == 0 && owed > 0 && self.credit.balance() < self.max_segment;
        if owed < self.step && !stuck {
            return None;
        }
        // Cannot fail: the balance after it is the window less what is unconsumed.
        self.credit.grant(owed).ok()?;
        self.returned += owed;
        Some(owed)
    }
}

/// Who reads the batches.
#[derive(Debug)]
enum Reader {
    /// Nobody now: chunks wait in the queue.
    Idle,
    /// A `next()` waits for the next chunk or the end.
    Waiting,
    /// `readAll()` gathers every batch until the end.
    Collecting(Vec<ArrowBatch>),
}

/// A chunk nobody has read yet, with the payload bytes it came in and its memory.
#[derive(Debug)]
struct Queued {
    chunk: Chunk,
    bytes: u64,
    memory: u64,
}

/// What `next()` finds.
#[derive(Debug)]
pub enum Next {
    Chunk(Chunk),
    /// The stream has ended, with this status.
    End(Result<(), Failure>),
    /// Nothing yet: an [`Action::Chunk`] or [`Action::GetEnded`] will answer.
    Wait,
}

/// What a DoGet has received and decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GetStats {
    /// Frame payload bytes (`app_metadata` plus IPC bytes), the bytes credit counts.
    pub bytes_received: u64,
    pub ipc_bytes_received: u64,
    pub read: ReadStats,
    pub rows: u64,
}

pub struct GetStream {
    /// The id the client's caller knows the stream by.
    id: u32,
    /// The id of the request the gateway is answering: `id`, until another location is
    /// asked (see [`Locations`]).
    wire: u32,
    ticket: Vec<u8>,
    locations: Locations,
    decoder: StreamDecoder,
    /// The `app_metadata` of the message arriving, and the messages read before it.
    arriving: Option<(u64, Vec<u8>)>,
    reservation: Reservation,
    /// The bytes of the batches in `queue`.
    queued_memory: u64,
    window: Window,
    ipc_received: u64,
    rows: u64,
    queue: VecDeque<Queued>,
    reader: Reader,
    done: Option<Result<(), Failure>>,
    /// The client asked the gateway to stop.
    cancelled: bool,
    /// Nobody holds the stream any more: it goes once it has ended.
    pub(super) released: bool,
}

impl GetStream {
    /// DoGet `id` of `ticket`, read at the first of `locations` (none: the gateway's
    /// upstream) and then at the next ones while [`Locations::next`] says so.
    pub(super) fn new(
        id: u32,
        ticket: Vec<u8>,
        locations: Vec<String>,
        window: u64,
        limits: Limits,
        reservation: Reservation,
    ) -> Self {
        let read_limits = ReadLimits {
            max_message_bytes: limits.max_message,
            ..ReadLimits::default()
        };
        GetStream {
            id,
            wire: id,
            ticket,
            locations: Locations::new(locations),
            decoder: StreamDecoder::new(read_limits),
            arriving: None,
            reservation,
            queued_memory: 0,
            window: Window::new(window, limits.max_segment),
            ipc_received: 0,
            rows: 0,
            queue: VecDeque::new(),
            reader: Reader::Idle,
            done: None,
            cancelled: false,
            released: false,
        }
    }

    /// The request that reads the ticket at the current location.
    pub(super) fn request(&self) -> ClientMessage {
        ClientMessage::DoGet {
            stream: self.wire,
            ticket: self.ticket.clone(),
            location: self.locations.current().cloned(),
            credit: Some(self.window.window),
        }
    }

    pub(super) fn wire(&self) -> u32 {
        self.wire
    }

    /// The current location failed with `failure`: returns whether the next one is to be
    /// asked (then [`GetStream::reopen`] does), or the failure the stream ends with.
    pub(super) fn pass_over(&mut self, failure: Failure) -> Result<(), Failure> {
        if !self.is_open() {
            return Err(failure);
        }
        let nothing_arrived = self.window.received == 0;
        self.locations.next(failure, nothing_arrived).map(drop)
    }

    /// Asks the next location, as request `wire`. Nothing arrived, so the credit
    /// window is whole and the decoder has seen nothing.
    pub(super) fn reopen(&mut self, wire: u32) -> ClientMessage {
        self.wire = wire;
        self.request()
    }

    /// Whether frames and statuses still reach this stream.
    pub(super) fn is_open(&self) -> bool {
        self.done.is_none() && !self.cancelled
    }

    pub(super) fn has_ended(&self) -> bool {
        self.done.is_some()
    }

    /// A frame of this stream whose IPC bytes are `ipc` of the received message;
    /// `app_metadata` copies its `app_metadata` out, and `deliver` pushes the IPC bytes
    /// into the decoder. An error is the gateway's breach of the protocol.
    pub(super) fn on_frame<M, D>(
        &mut self,
        header: &Header,
        app_metadata: M,
        ipc: Range<usize>,
        deliver: D,
        out: &mut Actions,
    ) -> Result<(), ProtocolError>
    where
        M: FnOnce() -> Vec<u8>,
        D: FnOnce(&mut StreamDecoder, Range<usize>) -> crate::ipc::Result<()>,
    {
        if !self.is_open() {
            return Ok(());
        }
        self.window.receive(header.app_metadata_len + ipc.len())?;
        // Empty app_metadata is none: Arrow C++ would read such a metadata frame as the
        // end of the stream.
        let app_metadata = (header.app_metadata_len > 0).then(app_metadata);
        if header.kind == FrameKind::Metadata {
            self.deliver(None, app_metadata, out);
        } else {
            if let Some(m) = app_metadata {
                let read = self.decoder.stats().messages;
                self.arriving = Some((read, m));
            }
            self.ipc_received += ipc.len() as u64;
            // What the frame's messages decompress to must fit what is left of the budget.
            let left = self.reservation.available().saturating_sub(self.holding());
            self.decoder.set_push_budget(Some(left));
            if let Err(e) = deliver(&mut self.decoder, ipc) {
                // The gateway forwards bytes as the server wrote them: stop the call.
                self.stop(e.into(), out);
                return Ok(());
            }
        }
        self.drain(out);
        if !self.is_open() {
            return Ok(());
        }
        if let Err(failure) = self.hold() {
            self.stop(failure, out);
            return Ok(());
        }
        self.grant(out);
        out.push(Action::Progress { stream: self.id });
        Ok(())
    }

    /// What the decoder has allocated for the message still arriving, the dictionaries it
    /// keeps, and the batches nobody has read yet; once the stream has ended, only those
    /// batches (the decoder decodes nothing more).
    fn holding(&self) -> u64 {
        let decoding = match self.done {
            Some(_) => 0,
            None => self.decoder.reserved_bytes() as u64 + self.decoder.dictionary_bytes(),
        };
        decoding + self.queued_memory
    }

    /// Holds what this stream holds (see `holding`) against the budget all DoGets share.
    fn hold(&mut self) -> Result<(), Failure> {
        let held = self.holding();
        let limit = self.reservation.limit();
        self.reservation.hold(held).map_err(|total| {
            Failure::new(
                RESOURCE_EXHAUSTED,
                format!(
                    "this DoGet holds {held} bytes (messages still arriving, dictionaries, \
                     batches not yet read), which brings this module's open DoGets to {total} \
                     bytes, over their limit of {limit} bytes"
                ),
            )
        })
    }

    /// Moves decoded batches, with the `app_metadata` of their messages, to the reader or
    /// to the queue.
    fn drain(&mut self, out: &mut Actions) {
        // A chunk delivered may end the stream (its handle was released): drop the rest.
        while self.is_open() {
            let Some(batch) = self.decoder.next_batch_with_metadata() else {
                break;
            };
            self.rows += batch.0.num_rows() as u64;
            let app_metadata = self.arriving.take().map(|(_, m)| m);
            self.deliver(Some(batch), app_metadata, out);
        }
        if !self.is_open() {
            return;
        }
        // The message has been read and made no batch: its app_metadata comes alone.
        let messages = self.decoder.stats().messages;
        if let Some((read, _)) = self.arriving {
            if messages > read || self.decoder.is_ended() {
                let app_metadata = self.arriving.take().map(|(_, m)| m);
                self.deliver(None, app_metadata, out);
            }
        }
    }

    /// Hands a chunk to the reader, or queues it. `readAll()` skips app_metadata: it is
    /// consumed at once.
    fn deliver(
        &mut self,
        batch: Option<ArrowBatch>,
        app_metadata: Option<Vec<u8>>,
        out: &mut Actions,
    ) {
        if batch.is_none() && app_metadata.is_none() {
            return;
        }
        let stream = self.id;
        let bytes = std::mem::take(&mut self.window.since_batch);
        match (&mut self.reader, batch) {
            (Reader::Collecting(batches), batch) => {
                if let Some(batch) = batch {
                    batches.push(batch);
                }
            }
            (Reader::Waiting, batch) => {
                self.reader = Reader::Idle;
                let chunk = Chunk {
                    batch,
                    app_metadata,
                };
                out.push(Action::Chunk { stream, chunk });
                // Released while its read was pending: nobody reads past this chunk.
                if self.released {
                    self.cancel(out);
                }
            }
            (Reader::Idle, batch) => {
                self.window.queued += bytes;
                // Each chunk costs its bookkeeping too: a metadata frame of 1 byte is one.
                let memory = batch.as_ref().map_or(0, |(b, _)| batch_bytes(b))
                    + app_metadata.as_ref().map_or(0, |m| m.len() as u64)
                    + size_of::<Queued>() as u64;
                self.queued_memory += memory;
                let chunk = Chunk {
                    batch,
                    app_metadata,
                };
                self.queue.push_back(Queued {
                    chunk,
                    bytes,
                    memory,
                });
            }
        }
    }

    fn grant(&mut self, out: &mut Actions) {
        if !self.is_open() {
            return;
        }
        if let Some(bytes) = self.window.owed() {
            out.push(Action::send(ClientMessage::Credit {
                stream: self.wire,
                bytes,
            }));
        }
    }

    /// Asks the gateway to stop, and ends the stream here with status CANCELLED at once:
    /// a gateway that never answers (or a dead network) must not keep it waiting.
    pub fn cancel(&mut self, out: &mut Actions) {
        self.stop(Failure::cancelled(), out);
    }

    /// Asks the gateway to stop the call, and ends the stream here with `failure`.
    fn stop(&mut self, failure: Failure, out: &mut Actions) {
        if self.is_open() {
            self.cancelled = true;
            out.push(Action::send(ClientMessage::Cancel { stream: self.wire }));
            self.end(Err(failure), out);
        }
    }

    /// The status arrived (or the connection failed).
    pub(super) fn finish(&mut self, result: Result<(), Failure>, out: &mut Actions) {
        let result = result.and_then(|()| self.complete());
        self.end(result, out);
    }

    /// An OK status ends a whole stream only: one that ends with its end-of-stream marker.
    fn complete(&self) -> Result<(), Failure> {
        self.decoder.finish()?;
        if !self.decoder.is_ended() {
            return Err(Failure::new(
                DATA_LOSS,
                "the gateway ended the stream with OK before its end-of-stream marker: \
                 the data is incomplete",
            ));
        }
        Ok(())
    }

    fn end(&mut self, result: Result<(), Failure>, out: &mut Actions) {
        if self.done.is_some() {
            return;
        }
        if self.decoder.is_inside_message() {
            self.decoder.abandon("the stream ended inside a message");
        }
        // A waiter exists only while the queue is empty: it gets the end now.
        match std::mem::replace(&mut self.reader, Reader::Idle) {
            Reader::Collecting(batches) => out.push(Action::Collected {
                stream: self.id,
                result: self.collected(&result, batches),
            }),
            Reader::Waiting | Reader::Idle => out.push(Action::GetEnded {
                stream: self.id,
                result: result.clone(),
            }),
        }
        self.done = Some(result);
        // The batches nobody has read are still held; next() lets go of them one by one.
        let _ = self.hold();
    }

    fn collected(&self, result: &Result<(), Failure>, batches: Vec<ArrowBatch>) -> Collected {
        result.clone()?;
        let schema = self
            .decoder
            .schema()
            .cloned()
            .ok_or_else(|| Failure::new(INTERNAL, "the stream ended before its schema"))?;
        Ok((schema, batches))
    }

    /// The next [`Chunk`], the end, or [`Next::Wait`]. Taking a queued chunk may grant
    /// credit.
    pub fn next(&mut self, out: &mut Actions) -> Result<Next, ClientError> {
        if let Some(queued) = self.queue.pop_front() {
            self.window.queued -= queued.bytes;
            self.queued_memory -= queued.memory;
            // Less than before: what other streams hold may be over, but not this one.
            let _ = self.hold();
            self.grant(out);
            return Ok(Next::Chunk(queued.chunk));
        }
        match (&self.done, &self.reader) {
            (Some(result), _) => Ok(Next::End(result.clone())),
            (None, Reader::Idle) => {
                self.reader = Reader::Waiting;
                Ok(Next::Wait)
            }
            (None, _) => Err(ClientError::Usage(
                "readChunk() was called while a previous readChunk() or readAll() is pending",
            )),
        }
    }

    /// Gathers every remaining batch: at once if the stream has ended, otherwise in an
    /// [`Action::Collected`] at its end.
    pub fn collect(&mut self, out: &mut Actions) -> Result<Option<Collected>, ClientError> {
        if !matches!(self.reader, Reader::Idle) {
            return Err(ClientError::Usage(
                "readAll() was called while a previous readChunk() or readAll() is pending",
            ));
        }
        let mut batches = Vec::new();
        for queued in self.queue.drain(..) {
            if let Some(batch) = queued.chunk.batch {
                batches.push(batch);
            }
        }
        self.window.queued = 0;
        self.queued_memory = 0;
        let _ = self.hold();
        self.grant(out);
        match &self.done {
            Some(result) => Ok(Some(self.collected(result, batches))),
            None => {
                self.reader = Reader::Collecting(batches);
                Ok(None)
            }
        }
    }

    /// The handle is gone: with no reader waiting, nobody will read the rest, so cancel;
    /// with a `next()` waiting, once it has its chunk (see `deliver`).
    /// (`client.doGet(t).readAll()` drops the handle while its promise is pending.)
    pub(super) fn release(&mut self, out: &mut Actions) {
        if matches!(self.reader, Reader::Idle) {
            self.cancel(out);
        }
        self.released = true;
    }

    /// The schema once the first message arrived.
    pub fn schema(&self) -> Option<&SchemaRef> {
        self.decoder.schema()
    }

    pub fn stats(&self) -> GetStats {
        GetStats {
            bytes_received: self.window.received,
            ipc_bytes_received: self.ipc_received,
            read: *self.decoder.stats(),
            rows: self.rows,
        }
    }

    /// The credit window this stream runs with, in bytes.
    pub fn window(&self) -> u64 {
        self.window.window
    }
}
