//! The right-sized IPC stream encoder.
//!
//! Every message is sized before it is written: the 8-byte prefix, the flatbuffer
//! metadata padded so that the body starts on a multiple of 8, and the body with each
//! buffer padded to 8. A message of at most `max_chunk_bytes` then gets one allocation of
//! exactly its size, written once and never shrunk or copied; a longer one is cut into
//! chunks of exactly `max_chunk_bytes` (the last one shorter). See the [IPC format].
//!
//! [IPC format]: https://arrow.apache.org/docs/format/Columnar.html#serialization-and-interprocess-communication-ipc

mod body;
mod chunks;
mod dictionaries;
mod file;
mod message;
mod options;
mod part;

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_ipc::MessageHeader;
use arrow_schema::{DataType, Field, SchemaRef};

pub use chunks::Chunks;
pub use file::{write_file_with_metadata, FileEncoder};
pub use options::{
    max_chunk_bytes_refused, ChunkSizing, WriteOptions, DEFAULT_MAX_CHUNK_BYTES,
    MIN_MAX_CHUNK_BYTES,
};

use crate::ipc::error::{QuiverError, Result};
use crate::ipc::BatchMetadata;
use body::BodyPlan;
use chunks::ChunkWriter;
use dictionaries::{Dictionaries, Update};
use message::MessageEncoder;

/// The sizes of the messages that one write produces, in bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MessageSizes {
    /// The schema message, if this write is the stream's first.
    pub schema: Option<usize>,
    /// The dictionary messages (new, delta or replacement), in stream order.
    pub dictionaries: Vec<usize>,
    pub record_batch: usize,
}

impl MessageSizes {
    /// How many messages.
    pub fn count(&self) -> u64 {
        (self.schema.is_some() as usize + self.dictionaries.len() + 1) as u64
    }

    /// All bytes of the write.
    pub fn total(&self) -> usize {
        self.schema.unwrap_or(0) + self.dictionaries.iter().sum::<usize>() + self.record_batch
    }
}

/// What a writer has done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteStats {
    pub messages: u64,
    pub batches: u64,
    /// Bytes handed out in chunks.
    pub bytes_written: u64,
    /// Bytes copied beyond writing each output byte once: compressed buffers staged before
    /// their chunk is sized, input the codec copies into its own buffer (LZ4, ruzstd), and
    /// the fixed-chunk mode's shrink copies. 0 for an uncompressed, right-sized stream.
    pub extra_bytes_copied: u64,
}

/// Encodes record batches as an IPC stream, one [`Chunks`] per call.
///
/// After an error the stream is unchanged: the failed batch wrote nothing, and the next
/// call may go on.
pub struct StreamEncoder {
    schema: SchemaRef,
    options: WriteOptions,
    messages: MessageEncoder,
    body: BodyPlan,
    dictionaries: Dictionaries,
    updates: Vec<Update>,
    schema_written: bool,
    finished: bool,
    stats: WriteStats,
    /// Set for the file format, which allows no dictionary replacements.
    refuse_replacements: bool,
    /// The messages of the last write, in order, for a file's footer.
    written: Vec<Written>,
}

/// Where one written message splits into metadata (prefix included) and body.
#[derive(Clone, Copy, Debug)]
struct Written {
    kind: MessageHeader,
    metadata: usize,
    body: usize,
}

impl Written {
    /// A message of `size` bytes, `metadata` of them before its body.
    fn new(kind: MessageHeader, metadata: usize, size: usize) -> Self {
        Written {
            kind,
            metadata,
            body: size - metadata,
        }
    }
}

impl StreamEncoder {
    /// A writer for batches of `schema`. Fails on invalid options or a type it cannot write.
    pub fn try_new(schema: SchemaRef, options: WriteOptions) -> Result<Self> {
        Self::open(schema, options, false)
    }

    /// A stream writer or, with `file`, the writer of a file's messages: the file format
    /// holds one dictionary per id, which only deltas extend, so a file sends a dictionary
    /// that grew as a delta whatever `options.dictionary_deltas` says, and refuses one
    /// that changed otherwise.
    fn open(schema: SchemaRef, options: WriteOptions, file: bool) -> Result<Self> {
        options.validate()?;
        for field in schema.fields() {
            body::check_type(field.name(), field.data_type())?;
        }
        Ok(StreamEncoder {
            schema,
            options,
            messages: MessageEncoder::with_zstd_level(options.zstd_level),
            body: BodyPlan::default(),
            dictionaries: Dictionaries::new(options.dictionary_deltas || file),
            updates: Vec::new(),
            schema_written: false,
            finished: false,
            stats: WriteStats::default(),
            refuse_replacements: file,
            written: Vec::new(),
        })
    }

    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    pub fn options(&self) -> &WriteOptions {
        &self.options
    }

    pub fn stats(&self) -> &WriteStats {
        &self.stats
    }

    /// Encodes `batch`, preceded by the schema on the first write and by the dictionary
    /// messages it needs. The chunks are the caller's.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<Chunks> {
        self.write_with_metadata(batch, &BatchMetadata::new())
    }

    /// [`StreamEncoder::write`], with `metadata` as the record batch message's custom
    /// metadata.
    pub fn write_with_metadata(
        &mut self,
        batch: &RecordBatch,
        metadata: &BatchMetadata,
    ) -> Result<Chunks> {
        let mut out = ChunkWriter::new(self.options.max_chunk_bytes, self.options.chunk_sizing);
        let sizes = self.encode(batch, metadata, Some(&mut out))?;
        let extra = out.extra_copied + std::mem::take(&mut self.messages.extra_copied);
        let chunks = out.finish()?;
        self.schema_written = true;
        self.dictionaries.commit(&mut self.updates);
        self.stats.messages += sizes.count();
        self.stats.batches += 1;
        self.stats.bytes_written += chunks.byte_length() as u64;
        self.stats.extra_bytes_copied += extra;
        Ok(chunks)
    }

    /// The sizes of the messages that `write(batch)` would produce now, without writing.
    /// With compression this compresses the buffers, since their size decides the answer.
    pub fn message_sizes(&mut self, batch: &RecordBatch) -> Result<MessageSizes> {
        self.encode(batch, &BatchMetadata::new(), None)
    }

    /// The sizes of the messages that `write_with_metadata(batch, metadata)` would produce.
    pub fn message_sizes_with_metadata(
        &mut self,
        batch: &RecordBatch,
        metadata: &BatchMetadata,
    ) -> Result<MessageSizes> {
        self.encode(batch, metadata, None)
    }

    /// Ends the stream: the schema (if no batch was written) and the end-of-stream marker.
    pub fn finish(&mut self) -> Result<Chunks> {
        self.check_open()?;
        let mut out = ChunkWriter::new(self.options.max_chunk_bytes, self.options.chunk_sizing);
        self.written.clear();
        if !self.schema_written {
            self.write_schema(&mut out)?;
        }
        MessageEncoder::write_end(&mut out)?;
        let extra = out.extra_copied;
        let chunks = out.finish()?;
        self.stats.messages += if self.schema_written { 1 } else { 2 };
        self.schema_written = true;
        self.finished = true;
        self.stats.bytes_written += chunks.byte_length() as u64;
        self.stats.extra_bytes_copied += extra;
        Ok(chunks)
    }

    fn check_open(&self) -> Result<()> {
        match self.finished {
            true => Err(QuiverError::Usage(
                "the stream is finished: finish() already wrote its end-of-stream marker".into(),
            )),
            false => Ok(()),
        }
    }

    /// Sizes every message of a write and, given `out`, writes them.
    fn encode(
        &mut self,
        batch: &RecordBatch,
        metadata: &BatchMetadata,
        mut out: Option<&mut ChunkWriter>,
    ) -> Result<MessageSizes> {
        self.check_open()?;
        check_batch_schema(&self.schema, batch)?;
        self.messages.extra_copied = 0;
        self.written.clear();
        let mut sizes = MessageSizes::default();
        self.updates.clear();
        let mut ids = 0i64..;
        for (column, field) in batch.columns().iter().zip(batch.schema_ref().fields()) {
            let first = self.updates.len();
            self.dictionaries
                .column_updates(column, &mut ids, &mut self.updates)?;
            if self.refuse_replacements {
                self.dictionaries
                    .check_no_replacement(&self.updates[first..], field.name())?;
            }
        }
        if !self.schema_written {
            sizes.schema = Some(match out.as_deref_mut() {
                Some(out) => self.write_schema(out)?,
                None => self.messages.plan_schema(&self.schema)?,
            });
        }
        let compression = self.options.compression;
        for update in &self.updates {
            self.body.clear();
            self.body.add(&update.values, "dictionary values")?;
            let dictionary = Some((update.id, update.is_delta));
            let size = self.messages.plan_batch(
                &self.body,
                update.values.len(),
                compression,
                dictionary,
                &BatchMetadata::new(),
            )?;
            if let Some(out) = out.as_deref_mut() {
                let metadata = self.messages.write(size, &self.body, out)?;
                let kind = MessageHeader::DictionaryBatch;
                self.written.push(Written::new(kind, metadata, size));
            }
            sizes.dictionaries.push(size);
        }
        self.body.clear();
        for (column, field) in batch.columns().iter().zip(self.schema.fields()) {
            self.body.add_column(column, field.name())?;
        }
        let size =
            self.messages
                .plan_batch(&self.body, batch.num_rows(), compression, None, metadata)?;
        if let Some(out) = out {
            let metadata = self.messages.write(size, &self.body, out)?;
            let kind = MessageHeader::RecordBatch;
            self.written.push(Written::new(kind, metadata, size));
        }
        sizes.record_batch = size;
        Ok(sizes)
    }

    fn write_schema(&mut self, out: &mut ChunkWriter) -> Result<usize> {
        let size = self.messages.plan_schema(&self.schema)?;
        let metadata = self.messages.write(size, &BodyPlan::default(), out)?;
        let kind = MessageHeader::Schema;
        self.written.push(Written::new(kind, metadata, size));
        Ok(size)
    }
}

/// The exact size of the record batch message that a new stream would write for `batch`
/// with `metadata` (without the schema and dictionary messages before it).
pub fn message_size(
    batch: &RecordBatch,
    metadata: &BatchMetadata,
    options: &WriteOptions,
) -> Result<usize> {
    let mut encoder = StreamEncoder::try_new(batch.schema(), *options)?;
    // Only the record batch message is wanted: skip building the schema's.
    encoder.schema_written = true;
    encoder
        .message_sizes_with_metadata(batch, metadata)
        .map(|sizes| sizes.record_batch)
}

/// The sizes of all messages a new stream would write for `batch` as its first batch.
pub fn stream_message_sizes(batch: &RecordBatch, options: &WriteOptions) -> Result<MessageSizes> {
    StreamEncoder::try_new(batch.schema(), *options)?.message_sizes(batch)
}

/// A whole stream (schema, batches, end-of-stream marker) in one `Chunks`.
pub fn write_stream(
    schema: SchemaRef,
    batches: &[RecordBatch],
    options: &WriteOptions,
) -> Result<Chunks> {
    let none = BatchMetadata::new();
    write_stream_with_metadata(schema, batches.iter().map(|b| (b, &none)), options)
}

/// [`write_stream`], each batch with its message's custom metadata.
pub fn write_stream_with_metadata<'a>(
    schema: SchemaRef,
    batches: impl IntoIterator<Item = (&'a RecordBatch, &'a BatchMetadata)>,
    options: &WriteOptions,
) -> Result<Chunks> {
    let mut encoder = StreamEncoder::try_new(schema, *options)?;
    let mut all = Chunks::default();
    for (batch, metadata) in batches {
        all.append(encoder.write_with_metadata(batch, metadata)?);
    }
    all.append(encoder.finish()?);
    Ok(all)
}

/// Whether a column of type `got` is written right under the schema's `want`: the same
/// types, with nested fields in the same order under the same names and union type ids.
/// arrow's `equals_datatype` ignores nested names and compares union fields as a set, so
/// a struct<y, x> would pass for a struct<x, y> and its children be written swapped.
fn same_layout(want: &DataType, got: &DataType) -> bool {
    want.equals_datatype(got) && nested_names(want) == nested_names(got)
}

/// The names (and union type ids) of the fields nested in `data_type`, in pre-order.
fn nested_names(data_type: &DataType) -> Vec<String> {
    fn walk(data_type: &DataType, out: &mut Vec<String>) {
        let mut field = |id: Option<i8>, f: &Field| {
            out.push(match id {
                Some(id) => format!("{id}:{}", f.name()),
                None => f.name().clone(),
            });
            walk(f.data_type(), out);
        };
        match data_type {
            DataType::Struct(fields) => fields.iter().for_each(|f| field(None, f)),
            DataType::Union(fields, _) => fields.iter().for_each(|(id, f)| field(Some(id), f)),
            DataType::List(f)
            | DataType::LargeList(f)
            | DataType::ListView(f)
            | DataType::LargeListView(f)
            | DataType::FixedSizeList(f, _)
            | DataType::Map(f, _) => field(None, f),
            DataType::RunEndEncoded(ends, values) => {
                field(None, ends);
                field(None, values);
            }
            DataType::Dictionary(_, values) => walk(values, out),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(data_type, &mut out);
    out
}

/// Names, types and nullability must match; metadata may differ.
fn check_batch_schema(schema: &SchemaRef, batch: &RecordBatch) -> Result<()> {
    let found = batch.schema_ref();
    // Batches of one stream or table share their schema.
    if Arc::ptr_eq(schema, found) {
        return Ok(());
    }
    if found.fields().len() != schema.fields().len() {
        return Err(QuiverError::Usage(format!(
            "the writer's schema has {} columns, the batch has {}",
            schema.fields().len(),
            found.fields().len()
        )));
    }
    for (index, (want, got)) in schema.fields().iter().zip(found.fields()).enumerate() {
        if want.name() != got.name()
            || want.is_nullable() != got.is_nullable()
            || !same_layout(want.data_type(), got.data_type())
        {
            return Err(QuiverError::Usage(format!(
                "column {index} of the batch is \"{}\": {}{}, but the writer's schema has \"{}\": {}{}",
                got.name(),
                got.data_type(),
                if got.is_nullable() { "" } else { " not null" },
                want.name(),
                want.data_type(),
                if want.is_nullable() { "" } else { " not null" },
            )));
        }
    }
    Ok(())
}
