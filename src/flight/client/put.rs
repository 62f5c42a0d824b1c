//! DoPut: one upload as the client keeps it. Batches are encoded by the right-sized
//! writer with chunks capped at the gateway's segment size, so each chunk becomes one
//! frame (or several, when the credit left is smaller), and frames go out only against
//! credit.

use std::collections::VecDeque;
use std::ops::Range;
use std::rc::Rc;

use arrow_array::RecordBatch;

use super::status::{Failure, DATA_LOSS};
use super::{Action, Actions, ClientError};
use crate::flight::control::ClientMessage;
use crate::flight::credit::Credit;
use crate::flight::frame::{encode_header, Flags, FrameKind, HEADER_LEN};
use crate::flight::ProtocolError;
use crate::ipc::{BatchMetadata, Chunks, StreamEncoder, WriteOptions};

/// Chunks not yet sent, from `chunk` and `offset` on.
#[derive(Debug)]
struct Pending {
    chunks: Rc<Chunks>,
    chunk: usize,
    offset: usize,
}

/// A binary frame to send: its header, then a range of one of the writer's chunks. The
/// bytes stay in the chunk until the socket's side copies them out.
#[derive(Debug)]
pub struct PutFrame {
    header: [u8; HEADER_LEN],
    chunks: Rc<Chunks>,
    chunk: usize,
    range: Range<usize>,
}

impl PutFrame {
    pub fn header(&self) -> &[u8; HEADER_LEN] {
        &self.header
    }

    pub fn payload(&self) -> &[u8] {
        let chunk = self.chunks.chunk(self.chunk).unwrap_or_default();
        chunk.get(self.range.clone()).unwrap_or_default()
    }
}

pub struct PutStream {
    id: u32,
    max_segment: usize,
    encoder: Option<StreamEncoder>,
    credit: Credit,
    pending: VecDeque<Pending>,
    /// After `finish()`: `end` goes out once the pending bytes are sent.
    ending: bool,
    /// `finish()` was called: the upload is on its way to its end.
    finishing: bool,
    /// Whether `end` went out: the upload is whole only then.
    end_sent: bool,
    results: Vec<Vec<u8>>,
    done: Option<Result<(), Failure>>,
    /// Nobody holds the stream any more: it goes once it has ended.
    pub(super) released: bool,
}

impl PutStream {
    pub(super) fn new(id: u32, max_segment: usize) -> Self {
        PutStream {
            id,
            max_segment,
            encoder: None,
            credit: Credit::default(),
            pending: VecDeque::new(),
            ending: false,
            finishing: false,
            end_sent: false,
            results: Vec::new(),
            done: None,
            released: false,
        }
    }

    pub(super) fn is_open(&self) -> bool {
        self.done.is_none()
    }

    pub(super) fn has_ended(&self) -> bool {
        self.done.is_some()
    }

    pub(super) fn grant(&mut self, bytes: u64, out: &mut Actions) -> Result<(), ProtocolError> {
        self.credit.grant(bytes)?;
        self.pump(out);
        Ok(())
    }

    pub(super) fn result(&mut self, app_metadata: Vec<u8>) {
        self.results.push(app_metadata);
    }

    /// Cuts frames while there is credit and something to send.
    fn pump(&mut self, out: &mut Actions) {
        while self.credit.balance() > 0 && self.done.is_none() {
            let Some(p) = self.pending.front_mut() else {
                break;
            };
            let Some(chunk) = p.chunks.chunk(p.chunk) else {
                self.pending.pop_front();
                continue;
            };
            let len = chunk.len();
            let n = self
                .credit
                .take_up_to((len - p.offset).min(self.max_segment));
            // A chunk never spans two messages; each write's first chunk starts one.
            let flags = Flags {
                first: p.offset == 0 && (p.chunk == 0 || p.chunks.ends_message(p.chunk - 1)),
                last: p.offset + n == len && p.chunks.ends_message(p.chunk),
            };
            out.push(Action::Frame(PutFrame {
                header: encode_header(self.id, FrameKind::Data, flags, 0),
                chunks: Rc::clone(&p.chunks),
                chunk: p.chunk,
                range: p.offset..p.offset + n,
            }));
            p.offset += n;
            if p.offset == len {
                p.chunk += 1;
                p.offset = 0;
            }
        }
        if self.pending.is_empty() && self.done.is_none() {
            out.push(Action::PutSent { stream: self.id });
            if std::mem::take(&mut self.ending) {
                self.end_sent = true;
                out.push(Action::send(ClientMessage::End { stream: self.id }));
            }
        }
    }

    fn check_open(&self) -> Result<(), ClientError> {
        match (&self.done, self.ending || self.finishing) {
            (Some(Err(f)), _) => Err(ClientError::PutFailed(f.message.clone())),
            (Some(Ok(())), _) | (None, true) => Err(ClientError::Usage("the upload is finished")),
            (None, false) => Ok(()),
        }
    }

    fn queue(&mut self, chunks: Chunks, out: &mut Actions) {
        self.pending.push_back(Pending {
            chunks: Rc::new(chunks),
            chunk: 0,
            offset: 0,
        });
        self.pump(out);
    }

    /// Whether everything written so far was sent; if not, an [`Action::PutSent`] says when.
    pub fn is_sent(&self) -> bool {
        self.pending.is_empty()
    }

    /// Encodes `batch` (the first one decides the schema) and sends what credit allows.
    pub fn write(
        &mut self,
        batch: &RecordBatch,
        metadata: &BatchMetadata,
        out: &mut Actions,
    ) -> Result<(), ClientError> {
        self.check_open()?;
        let max_segment = self.max_segment;
        let encoder = match &mut self.encoder {
            Some(encoder) => encoder,
            none => none.insert(StreamEncoder::try_new(
                batch.schema(),
                WriteOptions {
                    max_chunk_bytes: max_segment.max(8),
                    ..WriteOptions::default()
                },
            )?),
        };
        let chunks = encoder.write_with_metadata(batch, metadata)?;
        self.queue(chunks, out);
        Ok(())
    }

    /// Ends the IPC stream; `end` goes out once every byte is sent, and an
    /// [`Action::PutEnded`] carries the server's results.
    pub fn finish_upload(&mut self, out: &mut Actions) -> Result<(), ClientError> {
        self.check_open()?;
        let encoder = self.encoder.as_mut().ok_or_else(|| {
            ClientError::Usage("write at least one batch before finish(): the schema comes from it")
        })?;
        let chunks = encoder.finish()?;
        self.finishing = true;
        self.ending = true;
        self.queue(chunks, out);
        Ok(())
    }

    /// The status arrived (or the connection failed).
    pub(super) fn finish(&mut self, result: Result<(), Failure>, out: &mut Actions) {
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
        out.push(Action::PutEnded {
            stream: self.id,
            result: result.clone().map(|()| std::mem::take(&mut self.results)),
        });
        self.pending.clear();
        self.done = Some(result);
    }

    /// The handle is gone: cancel unless `finish()` was called, since nobody can end the
    /// upload, and one never ended must not stay open on the gateway.
    pub(super) fn release(&mut self, out: &mut Actions) {
        if !(self.finishing || self.ending || self.end_sent) {
            self.cancel(out);
        }
        self.released = true;
    }

    /// Asks the gateway to stop, and ends the upload here with status CANCELLED at once.
    pub fn cancel(&mut self, out: &mut Actions) {
        if self.done.is_none() {
            out.push(Action::send(ClientMessage::Cancel { stream: self.id }));
            self.finish(Err(Failure::cancelled()), out);
        }
    }
}
