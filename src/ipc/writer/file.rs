//! The IPC [file format] writer: the magic, the stream's messages, each in chunks of its
//! exact size, then a footer that lists where each dictionary and record batch lies.
//!
//! [file format]: https://arrow.apache.org/docs/format/Columnar.html#ipc-file-format

use arrow_array::RecordBatch;
use arrow_ipc::convert::IpcSchemaEncoder;
use arrow_ipc::writer::DictionaryTracker;
use arrow_ipc::{MessageHeader, MetadataVersion};
use arrow_schema::SchemaRef;
use flatbuffers::FlatBufferBuilder;

use super::chunks::ChunkWriter;
use super::{Chunks, StreamEncoder, WriteOptions, WriteStats};
use crate::ipc::error::Result;
use crate::ipc::reader::MAGIC;
use crate::ipc::BatchMetadata;

/// The magic, padded to 8 bytes so that the schema message starts aligned.
const HEAD: [u8; 8] = *b"ARROW1\0\0";

/// Encodes record batches as an IPC file, one [`Chunks`] per call; `finish` writes the
/// footer. Concatenated in order, the chunks are the file.
pub struct FileEncoder {
    stream: StreamEncoder,
    /// Where the next message starts in the file.
    offset: u64,
    dictionaries: Vec<arrow_ipc::Block>,
    batches: Vec<arrow_ipc::Block>,
}

impl FileEncoder {
    /// A writer for batches of `schema`. Fails on invalid options or a type it cannot write.
    pub fn try_new(schema: SchemaRef, options: WriteOptions) -> Result<Self> {
        Ok(FileEncoder {
            stream: StreamEncoder::open(schema, options, true)?,
            offset: 0,
            dictionaries: Vec::new(),
            batches: Vec::new(),
        })
    }

    pub fn stats(&self) -> &WriteStats {
        self.stream.stats()
    }

    /// Encodes `batch` with `metadata` as its message's custom metadata, after the magic
    /// and the schema on the first write and the dictionary messages it needs. A batch
    /// whose dictionary replaces (rather than extends) one written before is refused.
    pub fn write_with_metadata(
        &mut self,
        batch: &RecordBatch,
        metadata: &BatchMetadata,
    ) -> Result<Chunks> {
        let chunks = self.stream.write_with_metadata(batch, metadata)?;
        self.then(chunks)
    }

    /// Ends the file: the schema (if no batch was written), the end-of-stream marker
    /// that readers of streams expect, and the footer.
    pub fn finish(&mut self) -> Result<Chunks> {
        let chunks = self.stream.finish()?;
        let mut out = self.then(chunks)?;
        let builder = self.footer();
        let footer = builder.finished_data();
        let mut writer = self.chunk_writer();
        let size = footer.len() + 4 + MAGIC.len();
        writer.begin(size)?;
        writer.put(footer)?;
        writer.put(&(footer.len() as i32).to_le_bytes())?;
        writer.put(MAGIC)?;
        let tail = writer.finish()?;
        self.stream.stats.bytes_written += size as u64;
        out.append(tail);
        Ok(out)
    }

    /// The magic (before the first message), then `chunks`, whose messages are noted for
    /// the footer.
    fn then(&mut self, chunks: Chunks) -> Result<Chunks> {
        let mut out = Chunks::default();
        if self.offset == 0 {
            let mut writer = self.chunk_writer();
            writer.begin(HEAD.len())?;
            writer.put(&HEAD)?;
            out = writer.finish()?;
            self.offset = HEAD.len() as u64;
            self.stream.stats.bytes_written += HEAD.len() as u64;
        }
        for message in &self.stream.written {
            let block = arrow_ipc::Block::new(
                self.offset as i64,
                message.metadata as i32,
                message.body as i64,
            );
            match message.kind {
                MessageHeader::DictionaryBatch => self.dictionaries.push(block),
                MessageHeader::RecordBatch => self.batches.push(block),
                _ => {}
            }
            self.offset += (message.metadata + message.body) as u64;
        }
        out.append(chunks);
        Ok(out)
    }

    /// The footer's flatbuffer: the schema, numbered as the schema message numbers its
    /// dictionaries, and the blocks.
    fn footer(&self) -> FlatBufferBuilder<'static> {
        let mut fbb = FlatBufferBuilder::new();
        let mut tracker = DictionaryTracker::new(false);
        let schema = IpcSchemaEncoder::new()
            .with_dictionary_tracker(&mut tracker)
            .schema_to_fb_offset(&mut fbb, self.stream.schema());
        let dictionaries = fbb.create_vector(&self.dictionaries);
        let batches = fbb.create_vector(&self.batches);
        let mut footer = arrow_ipc::FooterBuilder::new(&mut fbb);
        footer.add_version(MetadataVersion::V5);
        footer.add_schema(schema);
        footer.add_dictionaries(dictionaries);
        footer.add_recordBatches(batches);
        let footer = footer.finish();
        fbb.finish(footer, None);
        fbb
    }

    fn chunk_writer(&self) -> ChunkWriter {
        let options = self.stream.options();
        ChunkWriter::new(options.max_chunk_bytes, options.chunk_sizing)
    }
}

/// A whole file (magic, schema, batches, footer) in one `Chunks`.
pub fn write_file_with_metadata<'a>(
    schema: SchemaRef,
    batches: impl IntoIterator<Item = (&'a RecordBatch, &'a BatchMetadata)>,
    options: &WriteOptions,
) -> Result<Chunks> {
    let mut encoder = FileEncoder::try_new(schema, *options)?;
    let mut all = Chunks::default();
    for (batch, metadata) in batches {
        all.append(encoder.write_with_metadata(batch, metadata)?);
    }
    all.append(encoder.finish()?);
    Ok(all)
}
