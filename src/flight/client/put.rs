//! DoPut: one upload as the client keeps it. Batches are encoded by the right-sized
//! writer with chunks capped at the gateway's segment size, so each chunk becomes one
//! frame (or several, when the credit left is smaller), and frames go out only against
//! credit. A write's `app_metadata` rides in the first frame of its record batch message
//! (after any dictionaries), as pyarrow's `write_with_metadata` sends it; a metadata
//! frame carries `app_metadata` alone.

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

/// What waits to be sent, in order.
#[derive(Debug)]
enum Pending {
    /// A write's chunks not yet sent, from `chunk` and `offset` on; `app_metadata` goes
    /// with the first frame of chunk `batch_at`, where the record batch message starts.
    Chunks {
        chunks: Rc<Chunks>,
        chunk: usize,
        offset: usize,
        app_metadata: Vec<u8>,
        batch_at: usize,
    },
    /// A metadata frame.
    Metadata(Vec<u8>),
}

/// A binary frame to send: its header and `app_metadata`, then a range of one of the
/// writer's chunks. The bytes stay in the chunk until the socket's side copies them out.
#[derive(Debug)]
pub struct PutFrame {
    header: [u8; HEADER_LEN],
    app_metadata: Vec<u8>,
    ipc: Option<(Rc<Chunks>, usize, Range<usize>)>,
}

impl PutFrame {
    pub fn header(&self) -> &[u8; HEADER_LEN] {
        &self.header
    }

    pub fn app_metadata(&self) -> &[u8] {
        &self.app_metadata
    }

    /// The IPC bytes.
    pub fn payload(&self) -> &[u8] {
        let Some((chunks, chunk, range)) = &self.ipc else {
            return &[];
        };
        let chunk = chunks.chunk(*chunk).unwrap_or_default();
        chunk.get(range.clone()).unwrap_or_default()
    }
}

pub struct PutStream {
    id: u32,
    max_segment: usize,
    /// The most `app_metadata` one frame may carry: it travels whole, within a segment
    /// and within the credit window the gateway opens the upload with.
    max_app_metadata: usize,
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
    /// An upload of frames of at most `max_segment` bytes, whose credit window is
    /// `window` bytes (0: unknown).
    pub(super) fn new(id: u32, max_segment: usize, window: u64) -> Self {
        let window = usize::try_from(window).unwrap_or(usize::MAX);
        PutStream {
            id,
            max_segment,
            max_app_metadata: match window {
                0 => max_segment,
                window => max_segment.min(window),
            },
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
        // Once the upload has ended its results were handed over, or nobody will take
        // them: kept, a gateway's stream of them would grow without end.
        if self.done.is_none() {
            self.results.push(app_metadata);
        }
    }

    /// The PutResults kept for `finish()`.
    #[cfg(test)]
    pub(super) fn results_kept(&self) -> usize {
        self.results.len()
    }

    /// Cuts frames while there is credit and something to send. `app_metadata` travels
    /// whole: its frame waits until the credit covers it and one IPC byte.
    fn pump(&mut self, out: &mut Actions) {
        while self.done.is_none() {
            let (kind, flags, app_metadata, ipc) = match self.pending.front_mut() {
                None => break,
                Some(Pending::Metadata(app_metadata)) => {
                    if self.credit.spend(app_metadata.len()).is_err() {
                        break;
                    }
                    let app_metadata = std::mem::take(app_metadata);
                    self.pending.pop_front();
                    (FrameKind::Metadata, Flags::WHOLE, app_metadata, None)
                }
                Some(Pending::Chunks {
                    chunks,
                    chunk,
                    offset,
                    app_metadata,
                    batch_at,
                }) => {
                    let Some(len) = chunks.chunk(*chunk).map(<[u8]>::len) else {
                        self.pending.pop_front();
                        continue;
                    };
                    // A chunk never spans two messages; each write's first chunk starts one.
                    let first = *offset == 0 && (*chunk == 0 || chunks.ends_message(*chunk - 1));
                    let carries = first && *chunk == *batch_at;
                    let meta_len = if carries { app_metadata.len() } else { 0 };
                    if self.credit.balance() <= meta_len as u64 {
                        break;
                    }
                    let meta = match carries {
                        true => std::mem::take(app_metadata),
                        false => Vec::new(),
                    };
                    let _ = self.credit.spend(meta_len);
                    let n = self
                        .credit
                        .take_up_to((len - *offset).min(self.max_segment - meta.len()));
                    let flags = Flags {
                        first,
                        last: *offset + n == len && chunks.ends_message(*chunk),
                    };
                    let ipc = (Rc::clone(chunks), *chunk, *offset..*offset + n);
                    *offset += n;
                    if *offset == len {
                        *chunk += 1;
                        *offset = 0;
                    }
                    (FrameKind::Data, flags, meta, Some(ipc))
                }
            };
            // Fits: app_metadata is at most a segment (`check_app_metadata`).
            let header = encode_header(self.id, kind, flags, app_metadata.len() as u32);
            out.push(Action::Frame(PutFrame {
                header,
                app_metadata,
                ipc,
            }));
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
            (Some(Err(f)), _) => Err(ClientError::PutFailed(f.clone())),
            (Some(Ok(())), _) | (None, true) => Err(ClientError::Usage("the upload is finished")),
            (None, false) => Ok(()),
        }
    }

    fn queue(&mut self, chunks: Chunks, app_metadata: Vec<u8>, out: &mut Actions) {
        // The last message of a write is its record batch.
        let batch_at = (1..chunks.count())
            .rev()
            .find(|&i| chunks.ends_message(i - 1))
            .unwrap_or(0);
        self.pending.push_back(Pending::Chunks {
            chunks: Rc::new(chunks),
            chunk: 0,
            offset: 0,
            app_metadata,
            batch_at,
        });
        self.pump(out);
    }

    /// `app_metadata` must fit one frame, with one IPC byte if `with_batch`.
    fn check_app_metadata(&self, app_metadata: &[u8], with_batch: bool) -> Result<(), ClientError> {
        let limit = self
            .max_app_metadata
            .saturating_sub(usize::from(with_batch));
        match app_metadata.len() {
            found if found > limit => Err(ClientError::AppMetadata { found, limit }),
            _ => Ok(()),
        }
    }

    /// Whether everything written so far was sent; if not, an [`Action::PutSent`] says when.
    pub fn is_sent(&self) -> bool {
        self.pending.is_empty()
    }

    /// Encodes `batch` (the first one decides the schema) and sends what credit allows;
    /// `app_metadata` (none if empty) goes with the batch's message.
    pub fn write(
        &mut self,
        batch: &RecordBatch,
        metadata: &BatchMetadata,
        app_metadata: Vec<u8>,
        out: &mut Actions,
    ) -> Result<(), ClientError> {
        self.check_open()?;
        self.check_app_metadata(&app_metadata, true)?;
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
        self.queue(chunks, app_metadata, out);
        Ok(())
    }

    /// Sends `app_metadata` alone, in a metadata frame, after what was written before.
    pub fn write_metadata(
        &mut self,
        app_metadata: Vec<u8>,
        out: &mut Actions,
    ) -> Result<(), ClientError> {
        self.check_open()?;
        if self.encoder.is_none() {
            // A metadata frame before it would come before the schema.
            return Err(ClientError::Usage(
                "write at least one batch before writeMetadata(): the schema comes first",
            ));
        }
        // A FlightData with neither metadata nor data reads as the end of the stream to
        // Arrow C++ servers (pyarrow's among them): every later batch would be lost.
        if app_metadata.is_empty() {
            return Err(ClientError::Usage(
                "writeMetadata() needs at least one byte: an empty FlightData would end the \
                 upload for Arrow C++ servers",
            ));
        }
        self.check_app_metadata(&app_metadata, false)?;
        self.pending.push_back(Pending::Metadata(app_metadata));
        self.pump(out);
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
        self.queue(chunks, Vec::new(), out);
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
        let results = std::mem::take(&mut self.results);
        out.push(Action::PutEnded {
            stream: self.id,
            result: result.clone().map(|()| results),
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
