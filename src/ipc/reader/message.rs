//! The decoder's state between messages: the schema, the dictionaries, the decompressor
//! and the batches decoded but not yet taken. `framing.rs` cuts the stream into messages;
//! this decodes each one.

use std::collections::VecDeque;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_buffer::Buffer;
use arrow_ipc::MessageHeader;
use arrow_schema::SchemaRef;

use super::decompress::{self, Decompressor};
use super::dictionaries::{Dictionaries, DictionaryHeader};
use super::framing::RawMessage;
use super::precheck::check_schema;
use super::repair::BodyLimit;
use super::{check_buffers, fields, read_batch};
use crate::ipc::error::{QuiverError, Result};
use crate::ipc::limits::ReadLimits;
use crate::ipc::stats::ReadStats;
use crate::ipc::BatchMetadata;

/// What the messages read so far left behind, for the messages still to come.
#[derive(Default)]
pub(super) struct MessageDecoder {
    decompressor: Decompressor,
    schema: Option<SchemaRef>,
    dictionaries: Dictionaries,
    ready: VecDeque<(RecordBatch, BatchMetadata)>,
}

impl MessageDecoder {
    /// A decoder for messages after the schema, which came from elsewhere (a file's footer).
    pub(super) fn with_schema(schema: SchemaRef) -> Self {
        MessageDecoder {
            schema: Some(schema),
            ..MessageDecoder::default()
        }
    }

    /// The stream's schema, once its first message has been decoded.
    pub(super) fn schema(&self) -> Option<&SchemaRef> {
        self.schema.as_ref()
    }

    /// The next decoded batch with its message's custom metadata.
    pub(super) fn next_batch(&mut self) -> Option<(RecordBatch, BatchMetadata)> {
        self.ready.pop_front()
    }

    /// Whether a dictionary with this id has been read.
    pub(super) fn has_dictionary(&self, id: i64) -> bool {
        self.dictionaries.by_id().contains_key(&id)
    }

    /// The bytes of the dictionaries kept so far.
    pub(super) fn dictionary_bytes(&self) -> u64 {
        self.dictionaries.bytes()
    }

    /// Decodes one complete message: a schema is kept, a dictionary batch updates the
    /// dictionaries, and a record batch joins the ready batches.
    pub(super) fn decode(
        &mut self,
        message: RawMessage<'_>,
        limits: &mut PushLimits,
        stats: &mut ReadStats,
    ) -> Result<()> {
        // SAFETY: the framer verified these exact bytes when the metadata arrived.
        let fb = unsafe { arrow_ipc::root_as_message_unchecked(message.metadata) };
        let version = fb.version();
        stats.messages += 1;
        match fb.header_type() {
            MessageHeader::Schema => {
                if self.schema.is_some() {
                    return Err(QuiverError::invalid(
                        "expected one schema message, found a second",
                    ));
                }
                let header = fb
                    .header_as_schema()
                    .ok_or_else(|| QuiverError::invalid("schema message has no schema"))?;
                self.schema = Some(read_schema(header)?);
            }
            MessageHeader::DictionaryBatch => {
                let schema = require_schema(&self.schema, "dictionary batch")?;
                let dict = fb.header_as_dictionary_batch().ok_or_else(|| {
                    QuiverError::invalid("dictionary batch message has no header")
                })?;
                let data = dict
                    .data()
                    .ok_or_else(|| QuiverError::invalid("dictionary batch has no data"))?;
                check_buffers(data, &message.body)?;
                let header = DictionaryHeader {
                    id: dict.id(),
                    is_delta: dict.isDelta(),
                };
                // A compressed batch is read from its decompressed copy, with its metadata
                // rewritten to point there; an uncompressed one from the message itself.
                let plain;
                let (body, data) = if data.compression().is_some() {
                    plain = limits.decompress(&mut self.decompressor, data, &message.body)?;
                    stats.bytes_copied += plain.bytes_copied;
                    (&plain.body, plain.record_batch())
                } else {
                    (&message.body, data)
                };
                let max_bytes = limits.limits.max_dictionary_bytes;
                let copied = self.dictionaries.read(
                    body,
                    header,
                    data,
                    schema,
                    version,
                    (max_bytes, limits.max_body()),
                )?;
                limits.charge(copied);
                stats.bytes_copied += copied;
            }
            MessageHeader::RecordBatch => {
                let schema = require_schema(&self.schema, "record batch")?;
                let batch = fb
                    .header_as_record_batch()
                    .ok_or_else(|| QuiverError::invalid("record batch message has no header"))?;
                check_buffers(batch, &message.body)?;
                // As for dictionaries; the decompression's copies count once the batch reads.
                let plain;
                let (body, batch, decompressed) = if batch.compression().is_some() {
                    plain = limits.decompress(&mut self.decompressor, batch, &message.body)?;
                    (&plain.body, plain.record_batch(), plain.bytes_copied)
                } else {
                    (&message.body, batch, 0)
                };
                let dictionaries = self.dictionaries.by_id();
                let (decoded, copied) = read_batch(
                    body,
                    batch,
                    schema,
                    dictionaries,
                    version,
                    limits.max_body(),
                )
                .map_err(|error| match self.dictionaries.missing(schema) {
                    Some((field, id)) => QuiverError::invalid(format!(
                        "record batch: field {field:?} uses dictionary id {id}, which the \
                         stream has not sent ({error})"
                    )),
                    None => error,
                })?;
                limits.charge(copied);
                stats.bytes_copied += decompressed + copied;
                stats.batches += 1;
                self.ready.push_back((decoded, batch_metadata(fb)));
            }
            other => {
                return Err(QuiverError::invalid(format!(
                    "expected a schema, dictionary batch or record batch message, found {}",
                    other
                        .variant_name()
                        .map(str::to_owned)
                        .unwrap_or_else(|| format!("unknown message type {}", other.0))
                )))
            }
        }
        Ok(())
    }
}

/// A schema from its flatbuffer (a schema message's, or a file footer's), checked for
/// what Quiver reads.
pub(super) fn read_schema(header: arrow_ipc::Schema<'_>) -> Result<SchemaRef> {
    if header.endianness() != arrow_ipc::Endianness::Little {
        return Err(QuiverError::Unsupported(
            "big-endian stream: Quiver reads little-endian IPC only".into(),
        ));
    }
    let schema = Arc::new(arrow_ipc::convert::try_fb_to_schema(header)?);
    check_schema(&fields(&schema))?;
    Ok(schema)
}

/// The limits of one push: the reader's, and what is left of the push's decompression
/// budget (see `StreamDecoder::set_push_budget`).
pub(super) struct PushLimits {
    pub(super) limits: ReadLimits,
    pub(super) left: Option<u64>,
}

impl PushLimits {
    /// The most a body that the reader builds may hold: `maxDecompressedBytes`, or what
    /// is left of the budget if less. A padded body (`repair.rs`) is held to it, as a
    /// decompressed one is.
    fn max_body(&self) -> BodyLimit {
        let max_decompressed = self.limits.max_decompressed_bytes;
        match self.left {
            Some(left) if left < max_decompressed => BodyLimit {
                max: left,
                name: "the memory the reader may still use",
            },
            _ => BodyLimit {
                max: max_decompressed,
                name: "maxDecompressedBytes",
            },
        }
    }

    /// Counts what reading a message allocated beyond its body (padded or realigned
    /// buffers) against what is left of the budget, as decompression counts its output.
    fn charge(&mut self, bytes: u64) {
        if let Some(left) = &mut self.left {
            *left = left.saturating_sub(bytes);
        }
    }

    /// Decompresses `batch` within `maxDecompressedBytes` and what is left of the budget.
    fn decompress<'d>(
        &mut self,
        decompressor: &'d mut Decompressor,
        batch: arrow_ipc::RecordBatch<'_>,
        body: &Buffer,
    ) -> Result<decompress::Plain<'d>> {
        let limits = &self.limits;
        let Some(left) = self.left else {
            return decompressor.decompress(batch, body, limits);
        };
        let capped = ReadLimits {
            max_decompressed_bytes: limits.max_decompressed_bytes.min(left),
            ..*limits
        };
        let plain = decompressor
            .decompress(batch, body, &capped)
            .map_err(|error| match error {
                QuiverError::LimitExceeded { found, .. }
                    if left < limits.max_decompressed_bytes =>
                {
                    QuiverError::LimitExceeded {
                        what: "decompressed message bodies of one push",
                        limit: "the memory the reader may still use",
                        found,
                        max: left,
                    }
                }
                other => other,
            })?;
        self.left = Some(left - plain.body.len() as u64);
        Ok(plain)
    }
}

/// The message's custom metadata. Pairs without a key or a value are left out, as
/// arrow-ipc leaves them out of schema metadata.
fn batch_metadata(message: arrow_ipc::Message<'_>) -> BatchMetadata {
    message
        .custom_metadata()
        .into_iter()
        .flatten()
        .filter_map(|kv| Some((kv.key()?.to_owned(), kv.value()?.to_owned())))
        .collect()
}

fn require_schema<'a>(schema: &'a Option<SchemaRef>, what: &str) -> Result<&'a SchemaRef> {
    schema.as_ref().ok_or_else(|| {
        QuiverError::invalid(format!("expected the schema message first, found a {what}"))
    })
}
