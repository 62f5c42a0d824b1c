//! Framed IPC messages: flatbuffer metadata built first, the exact size computed from
//! it, then every byte written once into chunks of that size.
//!
//! arrow-ipc's `StreamWriter`/`IpcDataGenerator::encode` write the body into a growing
//! `Vec` and copy it again into the output, which is the allocation and copy that the
//! right-sized writer exists to avoid. Its flatbuffer builders and schema encoder are
//! reused here unchanged.

use arrow_buffer::Buffer;
use arrow_ipc::convert::IpcSchemaEncoder;
use arrow_ipc::writer::DictionaryTracker;
use arrow_ipc::{MessageHeader, MetadataVersion};
use arrow_schema::Schema;
use flatbuffers::FlatBufferBuilder;

use super::body::BodyPlan;
use super::chunks::ChunkWriter;
use super::part::{Part, Sink};
use crate::ipc::codec::{Codecs, Compression};
use crate::ipc::error::{QuiverError, Result};
use crate::ipc::BatchMetadata;

/// The 8-byte prefix: continuation marker, then the metadata length.
const PREFIX: usize = 8;
const CONTINUATION_MARKER: [u8; 4] = [0xff; 4];

/// A message's custom metadata, built in the message's flatbuffer.
type KeyValues = flatbuffers::WIPOffset<
    flatbuffers::Vector<'static, flatbuffers::ForwardsUOffset<arrow_ipc::KeyValue<'static>>>,
>;

/// Bytes to add to `len` to reach a multiple of 8.
pub(crate) fn padding(len: usize) -> usize {
    len.next_multiple_of(8) - len
}

/// Builds and writes messages, keeping its builder and codec state between them.
#[derive(Default)]
pub(crate) struct MessageEncoder {
    fbb: FlatBufferBuilder<'static>,
    codecs: Codecs,
    /// The compressed buffers of the current message, each with its 8-byte length prefix,
    /// back to back; `packed_lengths` holds their lengths.
    packed: Vec<u8>,
    packed_lengths: Vec<usize>,
    /// A transformed part, materialized to be compressed.
    scratch: Vec<u8>,
    buffers: Vec<arrow_ipc::Buffer>,
    /// Bytes copied beyond writing each output byte once (compression staging, in the
    /// codec and here).
    pub(crate) extra_copied: u64,
}

impl MessageEncoder {
    /// An encoder whose ZSTD frames use `level` (honoured by the C zstd backend).
    pub(crate) fn with_zstd_level(level: i32) -> Self {
        MessageEncoder {
            codecs: Codecs::with_zstd_level(level),
            ..MessageEncoder::default()
        }
    }

    /// Builds the schema message's metadata; returns the message's size.
    pub(crate) fn plan_schema(&mut self, schema: &Schema) -> Result<usize> {
        // A fresh tracker numbers the dictionaries 0, 1, ... in the order
        // `dictionary_ids` reports, every time.
        let mut tracker = DictionaryTracker::new(false);
        self.fbb.reset();
        let header = IpcSchemaEncoder::new()
            .with_dictionary_tracker(&mut tracker)
            .schema_to_fb_offset(&mut self.fbb, schema);
        self.finish_message(MessageHeader::Schema, header.as_union_value(), 0, None);
        self.metadata_size()
    }

    /// Builds a record batch message (or, with `dictionary = Some((id, is_delta))`, a
    /// dictionary batch message) for `body`, compressing its buffers first if asked, with
    /// `metadata` as the message's custom metadata. Returns the message's size.
    pub(crate) fn plan_batch(
        &mut self,
        body: &BodyPlan,
        rows: usize,
        compression: Option<Compression>,
        dictionary: Option<(i64, bool)>,
        metadata: &BatchMetadata,
    ) -> Result<usize> {
        self.packed.clear();
        self.packed_lengths.clear();
        if let Some(codec) = compression {
            for part in &body.parts {
                self.pack(codec, part)?;
            }
        }
        self.buffers.clear();
        let mut offset: usize = 0;
        for (index, part) in body.parts.iter().enumerate() {
            let len = self.stored_len(index, part);
            self.buffers
                .push(arrow_ipc::Buffer::new(offset as i64, len as i64));
            // Buffers may share memory (one array behind many columns), so a body can
            // outgrow the address space of wasm32 even though each buffer fits in it.
            offset = offset
                .checked_add(len + padding(len))
                .filter(|&end| end <= isize::MAX as usize)
                .ok_or_else(|| {
                    QuiverError::Usage(format!(
                        "the message body would pass {} bytes, more than one allocation can hold",
                        isize::MAX
                    ))
                })?;
        }
        let body_len = offset;

        let fbb = &mut self.fbb;
        fbb.reset();
        let nodes = fbb.create_vector(&body.nodes);
        let buffers = fbb.create_vector(&self.buffers);
        let variadic =
            (!body.variadic_counts.is_empty()).then(|| fbb.create_vector(&body.variadic_counts));
        let codec = compression.map(|codec| {
            let mut c = arrow_ipc::BodyCompressionBuilder::new(fbb);
            c.add_method(arrow_ipc::BodyCompressionMethod::BUFFER);
            c.add_codec(codec.to_ipc());
            c.finish()
        });
        let mut batch = arrow_ipc::RecordBatchBuilder::new(fbb);
        batch.add_length(rows as i64);
        batch.add_nodes(nodes);
        batch.add_buffers(buffers);
        if let Some(c) = codec {
            batch.add_compression(c);
        }
        if let Some(v) = variadic {
            batch.add_variadicBufferCounts(v);
        }
        let batch = batch.finish();
        let metadata = (!metadata.is_empty()).then(|| {
            let pairs: Vec<_> = metadata
                .iter()
                .map(|(key, value)| {
                    let (key, value) = (fbb.create_string(key), fbb.create_string(value));
                    let mut pair = arrow_ipc::KeyValueBuilder::new(fbb);
                    pair.add_key(key);
                    pair.add_value(value);
                    pair.finish()
                })
                .collect();
            fbb.create_vector(&pairs)
        });
        match dictionary {
            None => self.finish_message(
                MessageHeader::RecordBatch,
                batch.as_union_value(),
                body_len,
                metadata,
            ),
            Some((id, is_delta)) => {
                let mut dict = arrow_ipc::DictionaryBatchBuilder::new(&mut self.fbb);
                dict.add_id(id);
                dict.add_data(batch);
                dict.add_isDelta(is_delta);
                let dict = dict.finish();
                self.finish_message(
                    MessageHeader::DictionaryBatch,
                    dict.as_union_value(),
                    body_len,
                    metadata,
                )
            }
        }
        Ok(self.metadata_size()? + body_len)
    }

    fn finish_message(
        &mut self,
        kind: MessageHeader,
        header: flatbuffers::WIPOffset<flatbuffers::UnionWIPOffset>,
        body_len: usize,
        metadata: Option<KeyValues>,
    ) {
        let mut message = arrow_ipc::MessageBuilder::new(&mut self.fbb);
        message.add_version(MetadataVersion::V5);
        message.add_header_type(kind);
        message.add_bodyLength(body_len as i64);
        message.add_header(header);
        if let Some(metadata) = metadata {
            message.add_custom_metadata(metadata);
        }
        let message = message.finish();
        self.fbb.finish(message, None);
    }

    /// Prefix plus metadata, padded so that the body starts on a multiple of 8.
    fn metadata_size(&self) -> Result<usize> {
        let len = self.fbb.finished_data().len();
        let size = PREFIX + len + padding(len);
        if size - PREFIX > i32::MAX as usize {
            return Err(QuiverError::Unsupported(format!(
                "message metadata of {len} bytes exceeds the format's {} bytes",
                i32::MAX
            )));
        }
        Ok(size)
    }

    /// Writes the last planned message, `size` bytes, parts taken from `body`. Returns the
    /// bytes before its body: the prefix and the padded metadata.
    pub(crate) fn write(
        &self,
        size: usize,
        body: &BodyPlan,
        out: &mut ChunkWriter,
    ) -> Result<usize> {
        out.begin(size)?;
        let metadata = self.fbb.finished_data();
        let padded = metadata.len() + padding(metadata.len());
        out.put(&CONTINUATION_MARKER)?;
        out.put(&(padded as i32).to_le_bytes())?;
        out.put(metadata)?;
        out.put(&[0; 8][..padding(metadata.len())])?;
        let mut packed = self.packed.as_slice();
        for (index, part) in body.parts.iter().enumerate() {
            let len = self.stored_len(index, part);
            match self.packed_lengths.get(index) {
                Some(&n) => {
                    let (bytes, rest) = packed.split_at(n);
                    out.put(bytes)?;
                    packed = rest;
                }
                None => part.write(out)?,
            }
            out.put(&[0; 8][..padding(len)])?;
        }
        Ok(PREFIX + padded)
    }

    /// The end-of-stream marker: a prefix with metadata length 0.
    pub(crate) fn write_end(out: &mut ChunkWriter) -> Result<()> {
        out.begin(PREFIX)?;
        out.put(&CONTINUATION_MARKER)?;
        out.put(&0i32.to_le_bytes())
    }

    fn stored_len(&self, index: usize, part: &Part) -> usize {
        self.packed_lengths
            .get(index)
            .copied()
            .unwrap_or_else(|| part.len())
    }

    /// Appends `part` to `packed` as the format stores a compressed buffer: the
    /// uncompressed length, then the frame; or, when the frame would not be smaller than
    /// the data, length -1 and the data as it is (what Arrow C++ does). An empty buffer
    /// stays empty.
    fn pack(&mut self, codec: Compression, part: &Part) -> Result<()> {
        let start = self.packed.len();
        let len = part.len();
        if len > 0 {
            let input = match part.as_buffer() {
                Some(buffer) => buffer.clone(),
                None => {
                    let mut scratch = std::mem::take(&mut self.scratch);
                    scratch.clear();
                    part.write(&mut scratch)?;
                    self.extra_copied += len as u64;
                    Buffer::from_vec(scratch)
                }
            };
            self.packed.extend_from_slice(&(len as i64).to_le_bytes());
            self.extra_copied += self.codecs.compress(codec, &input, &mut self.packed)? as u64;
            if self.packed.len() - start - PREFIX >= len {
                self.packed.truncate(start);
                self.packed.extend_from_slice(&(-1i64).to_le_bytes());
                self.packed.extend_from_slice(&input);
            }
            // Compressed bytes are staged here, then copied into the chunk.
            self.extra_copied += (self.packed.len() - start) as u64;
            if let Ok(scratch) = input.into_vec::<u8>() {
                self.scratch = scratch;
            }
        }
        self.packed_lengths.push(self.packed.len() - start);
        Ok(())
    }
}

impl Sink for ChunkWriter {
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        ChunkWriter::put(self, bytes)
    }
}
