//! The incremental IPC stream decoder.
//!
//! Segments of any size go in through [`StreamDecoder::push`] (or, from JavaScript,
//! [`StreamDecoder::push_segment`], which copies straight from a JS array); decoded
//! [`RecordBatch`]es come out of [`StreamDecoder::next_batch`]. Message framing is Quiver's
//! own (`framing.rs`), and so is building batches whose columns are all flat
//! (`flat.rs`); other batches, and schemas, are decoded by arrow-ipc. What one message
//! leaves for the next (schema, dictionaries) is kept in `message.rs`.

mod decompress;
mod dictionaries;
mod file;
mod flat;
mod framing;
mod message;
mod node_checks;
mod precheck;
mod repair;
mod validate;

use std::collections::HashMap;
use std::mem::MaybeUninit;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_buffer::Buffer;
use arrow_data::ArrayData;
use arrow_ipc::reader::RecordBatchDecoder;
use arrow_ipc::MetadataVersion;
use arrow_schema::{DataType, Field, SchemaRef};

use crate::ipc::error::{QuiverError, Result};
use crate::ipc::limits::ReadLimits;
use crate::ipc::stats::ReadStats;
use crate::ipc::BatchMetadata;
pub use file::{is_file, FileDecoder, MAGIC, TAIL_BYTES};
use flat::{all_flat, read_flat_batch};
use framing::Framer;
use message::{MessageDecoder, PushLimits};
use precheck::precheck;
use repair::BodyLimit;

/// Decodes one Arrow IPC stream, pushed in segments.
///
/// After an error the decoder is poisoned: every later push or finish fails with an error
/// that repeats the first (batches decoded before it can still be taken).
pub struct StreamDecoder {
    framer: Framer,
    messages: MessageDecoder,
    limits: ReadLimits,
    stats: ReadStats,
    failure: Option<String>,
    /// What all the messages of one push may decompress to together, if capped.
    push_budget: Option<u64>,
}

impl StreamDecoder {
    pub fn new(limits: ReadLimits) -> Self {
        StreamDecoder {
            framer: Framer::new(limits),
            messages: MessageDecoder::default(),
            limits,
            stats: ReadStats::default(),
            failure: None,
            push_budget: None,
        }
    }

    /// Caps the bytes that the compressed messages of each later push may decompress to,
    /// together (each is also held to `maxDecompressedBytes`). The Flight client gives a
    /// DoGet what is left of its memory budget: one frame may carry many small messages
    /// that each expand a thousandfold.
    pub fn set_push_budget(&mut self, bytes: Option<u64>) {
        self.push_budget = bytes;
    }

    /// Feeds bytes that are already in this address space (native callers, tests).
    pub fn push(&mut self, bytes: &[u8]) -> Result<()> {
        // SAFETY: the closure initializes every byte of each destination it is given.
        unsafe {
            self.push_segment(bytes.len(), |start, dst| {
                let src = &bytes[start..start + dst.len()];
                for (d, s) in dst.iter_mut().zip(src) {
                    d.write(*s);
                }
            })
        }
    }

    /// Feeds a segment of `len` bytes that lives elsewhere (a JS `Uint8Array`). The decoder
    /// calls `copy(start, destination)` once per part of a message that the segment
    /// covers; `copy` fills `destination` with the segment's bytes from `start` on. This is
    /// the one copy each byte gets.
    ///
    /// # Safety
    /// `copy` must initialize every byte of each destination it is given.
    pub unsafe fn push_segment(
        &mut self,
        len: usize,
        mut copy: impl FnMut(usize, &mut [MaybeUninit<u8>]),
    ) -> Result<()> {
        self.check_healthy()?;
        self.stats.bytes_pushed += len as u64;
        let mut limits = PushLimits {
            limits: self.limits,
            left: self.push_budget,
        };
        let mut start = 0;
        while start < len {
            let destination = self.framer.destination();
            if destination.is_empty() {
                return self.fail(QuiverError::invalid(format!(
                    "expected no bytes after the end-of-stream marker, found {}",
                    len - start
                )));
            }
            let n = destination.len().min(len - start);
            copy(start, &mut destination[..n]);
            start += n;
            self.stats.bytes_copied += n as u64;
            // SAFETY: `copy` initialized the `n` bytes, and n <= destination.len().
            let outcome = unsafe { self.framer.advance(n) }.and_then(|message| match message {
                Some(message) => self.messages.decode(message, &mut limits, &mut self.stats),
                None => Ok(()),
            });
            if let Err(error) = outcome {
                return self.fail(error);
            }
        }
        Ok(())
    }

    /// The next decoded batch, in stream order.
    pub fn next_batch(&mut self) -> Option<RecordBatch> {
        self.messages.next_batch().map(|(batch, _)| batch)
    }

    /// The next decoded batch with its message's custom metadata (empty if it had none).
    pub fn next_batch_with_metadata(&mut self) -> Option<(RecordBatch, BatchMetadata)> {
        self.messages.next_batch()
    }

    /// The stream's schema, once its first message has arrived.
    pub fn schema(&self) -> Option<&SchemaRef> {
        self.messages.schema()
    }

    pub fn stats(&self) -> &ReadStats {
        &self.stats
    }

    /// Whether the end-of-stream marker has been read.
    pub fn is_ended(&self) -> bool {
        self.framer.is_ended()
    }

    /// Bytes allocated for messages before their bytes arrive: the metadata and body of
    /// the message still arriving, each up to `maxMessageBytes` as the message declares
    /// it, and the metadata buffer kept between messages.
    pub fn reserved_bytes(&self) -> usize {
        self.framer.reserved_bytes()
    }

    /// The bytes of the dictionaries the stream has sent, which the decoder keeps until
    /// it is dropped (at most `maxDictionaryBytes`).
    pub fn dictionary_bytes(&self) -> u64 {
        self.messages.dictionary_bytes()
    }

    /// Whether the stream has stopped inside a message (see [`StreamDecoder::finish`]).
    pub fn is_inside_message(&self) -> bool {
        self.framer.incomplete().is_some()
    }

    /// Ends a stream that will get no more bytes, freeing the message still arriving;
    /// later calls fail with `reason`, unless the decoder had already failed.
    pub fn abandon(&mut self, reason: &str) {
        // A stream whose end-of-stream marker was read holds no partial message, and
        // still reports that it ended.
        if !self.framer.is_ended() {
            self.framer = Framer::new(self.limits);
        }
        self.failure.get_or_insert_with(|| reason.to_owned());
    }

    /// Checks that the stream ended cleanly: not inside a message, and after a schema.
    pub fn finish(&self) -> Result<()> {
        self.check_healthy()?;
        if let Some((what, needed, got)) = self.framer.incomplete() {
            return Err(QuiverError::Truncated { what, needed, got });
        }
        if self.messages.schema().is_none() {
            return Err(QuiverError::invalid(
                "stream ended before its schema message",
            ));
        }
        Ok(())
    }

    fn check_healthy(&self) -> Result<()> {
        match &self.failure {
            Some(message) => Err(QuiverError::Usage(format!(
                "the reader failed earlier and cannot continue: {message}"
            ))),
            None => Ok(()),
        }
    }

    /// Poisons the decoder; what it held of a message is freed, as nothing will complete it.
    fn fail(&mut self, error: QuiverError) -> Result<()> {
        self.abandon(&error.to_string());
        Err(error)
    }
}

fn fields(schema: &SchemaRef) -> Vec<&Field> {
    schema.fields().iter().map(|f| f.as_ref()).collect()
}

/// The bytes of a batch's buffers (a dictionary's values counted with each batch).
pub fn batch_bytes(batch: &RecordBatch) -> u64 {
    batch
        .columns()
        .iter()
        .map(|c| data_bytes(&c.to_data()))
        .sum()
}

/// The bytes of every buffer of `data` and its children.
fn data_bytes(data: &ArrayData) -> u64 {
    let nulls = data.nulls().map_or(0, |n| n.buffer().len());
    let buffers: usize = data.buffers().iter().map(|b| b.len()).sum();
    let children: u64 = data.child_data().iter().map(data_bytes).sum();
    (nulls + buffers) as u64 + children
}

/// Decodes a batch (a record batch, or a dictionary batch's data) from `body`, repairing
/// what `repair.rs` repairs; a body with padded buffers after it may hold at most
/// `max_body` bytes. Returns the batch and the bytes copied on the way: realigned buffers,
/// and the padded body.
fn read_batch(
    body: &Buffer,
    batch: arrow_ipc::RecordBatch<'_>,
    schema: &SchemaRef,
    dictionaries: &HashMap<i64, ArrayRef>,
    version: MetadataVersion,
    max_body: BodyLimit,
) -> Result<(RecordBatch, u64)> {
    if all_flat(schema) {
        return Ok((read_flat_batch(body, batch, schema)?, 0));
    }
    let fixes = precheck(batch, &fields(schema), version, body, max_body)?;
    let mut metadata;
    let batch = if fixes.is_empty() {
        batch
    } else {
        metadata = flatbuffers::FlatBufferBuilder::new();
        fixes.apply(batch, &mut metadata)
    };
    let padded = Buffer::from_vec(fixes.body);
    let body = if padded.is_empty() { body } else { &padded };
    // IPC aligns buffers to 8 only, and 16-byte types (decimal128, interval) may need a
    // realigning copy; `copied_outside` makes those copies visible in the stats.
    let decoder = RecordBatchDecoder::try_new(body, batch, schema.clone(), dictionaries, &version)?
        .with_require_alignment(false);
    let decoded = decoder.read_record_batch()?;
    let copied = padded.len() as u64 + copied_outside(&decoded, body);
    Ok((decoded, copied))
}

/// Bytes of the batch's buffers that do not live in `body`: copies arrow-ipc made to
/// realign them. The prechecks guarantee 8-byte alignment, so only types aligned wider
/// than 8 can be copied; batches without them skip the walk.
fn copied_outside(batch: &RecordBatch, body: &Buffer) -> u64 {
    fn walk(data: &ArrayData, body: std::ops::Range<usize>, total: &mut u64) {
        let nulls = data.nulls().map(|n| n.buffer());
        for buffer in data.buffers().iter().chain(nulls) {
            let start = buffer.as_ptr() as usize;
            let inside = body.contains(&start) && start + buffer.len() <= body.end;
            if !buffer.is_empty() && !inside {
                *total += buffer.len() as u64;
            }
        }
        // A dictionary's values live in the body of their dictionary batch, not this one.
        if !matches!(data.data_type(), DataType::Dictionary(..)) {
            for child in data.child_data() {
                walk(child, body.clone(), total);
            }
        }
    }
    if !batch
        .schema_ref()
        .fields()
        .iter()
        .any(|f| aligned_wider_than_8(f.data_type()))
    {
        return 0;
    }
    let start = body.as_ptr() as usize;
    let mut total = 0;
    for column in batch.columns() {
        walk(&column.to_data(), start..start + body.len(), &mut total);
    }
    total
}

/// Whether arrow-rs needs more than 8-byte alignment somewhere in this type's buffers.
fn aligned_wider_than_8(data_type: &DataType) -> bool {
    use arrow_schema::IntervalUnit::MonthDayNano;
    match data_type {
        DataType::Decimal128(..)
        | DataType::Decimal256(..)
        | DataType::Interval(MonthDayNano)
        | DataType::Utf8View
        | DataType::BinaryView => true,
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::FixedSizeList(f, _)
        | DataType::Map(f, _) => aligned_wider_than_8(f.data_type()),
        DataType::Struct(fields) => fields.iter().any(|f| aligned_wider_than_8(f.data_type())),
        DataType::Union(fields, _) => fields
            .iter()
            .any(|(_, f)| aligned_wider_than_8(f.data_type())),
        DataType::RunEndEncoded(_, values) => aligned_wider_than_8(values.data_type()),
        // Dictionary values are decoded, and counted, with their dictionary batch.
        _ => false,
    }
}

/// arrow-ipc slices buffers without a bounds check (a panic, which aborts a wasm
/// instance), so every buffer is checked against the body first.
fn check_buffers(batch: arrow_ipc::RecordBatch<'_>, body: &Buffer) -> Result<()> {
    for (index, buffer) in batch.buffers().into_iter().flatten().enumerate() {
        buffer_bytes(body, index, buffer)?;
    }
    Ok(())
}

/// The bytes of one buffer of a message body, or an error if it lies outside the body.
fn buffer_bytes<'a>(
    body: &'a Buffer,
    index: usize,
    buffer: &arrow_ipc::Buffer,
) -> Result<&'a [u8]> {
    let (offset, length) = (buffer.offset(), buffer.length());
    let range = usize::try_from(offset)
        .ok()
        .zip(usize::try_from(length).ok())
        .and_then(|(start, len)| Some(start..start.checked_add(len)?));
    range
        .and_then(|range| body.as_slice().get(range))
        .ok_or_else(|| {
            QuiverError::invalid(format!(
                "buffer {index} spans bytes {offset}..{}, but the message body has {} bytes",
                offset.saturating_add(length),
                body.len()
            ))
        })
}
