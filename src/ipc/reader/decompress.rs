//! Turns a compressed record batch into a plain one that arrow-ipc can read: every buffer
//! is decompressed into one new body allocated once at its exact size, and the metadata is
//! rewritten to point at the new offsets with no compression.
//!
//! Each compressed buffer starts with its uncompressed length as an int64; -1 means the
//! bytes that follow are stored as they are.

use arrow_buffer::{Buffer, MutableBuffer};
use arrow_ipc::BodyCompressionMethod;
use flatbuffers::FlatBufferBuilder;

use crate::ipc::codec::{Codecs, Compression};
use crate::ipc::error::{QuiverError, Result};
use crate::ipc::limits::ReadLimits;

/// Where one buffer's bytes come from and where they go.
struct Slot<'a> {
    source: &'a [u8],
    /// `None` when the buffer was stored uncompressed.
    codec: Option<Compression>,
    offset: usize,
    len: usize,
}

/// Decompresses batches with one set of codecs, and rewrites their metadata in one
/// flatbuffer builder, both kept from batch to batch.
#[derive(Default)]
pub(crate) struct Decompressor {
    codecs: Codecs,
    metadata: FlatBufferBuilder<'static>,
}

/// A decompressed batch: its metadata rewritten as an uncompressed `RecordBatch` table, and
/// the body its buffers point into.
pub(crate) struct Plain<'a> {
    metadata: &'a [u8],
    pub body: Buffer,
    /// Bytes copied on the way to the new body: buffers stored uncompressed (length -1),
    /// and what the codec copied while decompressing (`Codecs::decompress`).
    pub bytes_copied: u64,
}

impl Plain<'_> {
    /// The rewritten record batch.
    pub fn record_batch(&self) -> arrow_ipc::RecordBatch<'_> {
        // SAFETY: `plain_metadata` built these bytes, with a `RecordBatch` root, in a
        // flatbuffer builder; what the builder writes needs no verification.
        unsafe { flatbuffers::root_unchecked::<arrow_ipc::RecordBatch>(self.metadata) }
    }
}

impl Decompressor {
    /// Decompresses every buffer of `batch` into one new body, allocated once at its exact
    /// size, and rewrites the metadata to match it.
    pub fn decompress(
        &mut self,
        batch: arrow_ipc::RecordBatch<'_>,
        body: &Buffer,
        limits: &ReadLimits,
    ) -> Result<Plain<'_>> {
        let compression = batch
            .compression()
            .ok_or_else(|| QuiverError::invalid("expected a compressed record batch"))?;
        if compression.method() != BodyCompressionMethod::BUFFER {
            return Err(QuiverError::invalid(format!(
                "expected body compression method BUFFER, found {}",
                compression.method().0
            )));
        }
        let codec = Compression::from_ipc(compression.codec())?;
        let slots = plan(batch, body, codec, limits)?;
        let total = slots.last().map_or(0, |s| s.offset + padded(s.len));

        let mut out = MutableBuffer::try_from_len_zeroed(total).map_err(|e| {
            QuiverError::invalid(format!(
                "cannot allocate a {total}-byte decompressed body: {e}"
            ))
        })?;
        let mut bytes_copied = 0;
        for slot in &slots {
            let target = &mut out.as_slice_mut()[slot.offset..slot.offset + slot.len];
            match slot.codec {
                Some(codec) => {
                    bytes_copied += self.codecs.decompress(codec, slot.source, target)? as u64;
                }
                None => {
                    target.copy_from_slice(slot.source);
                    bytes_copied += slot.len as u64;
                }
            }
        }
        plain_metadata(&mut self.metadata, batch, &slots);
        Ok(Plain {
            metadata: self.metadata.finished_data(),
            body: out.into(),
            bytes_copied,
        })
    }
}

/// Reads each buffer's declared length and lays the buffers out in the new body, checking
/// the total against `maxDecompressedBytes` before anything is allocated.
fn plan<'a>(
    batch: arrow_ipc::RecordBatch<'_>,
    body: &'a Buffer,
    codec: Compression,
    limits: &ReadLimits,
) -> Result<Vec<Slot<'a>>> {
    let buffers = batch.buffers();
    let mut slots = Vec::with_capacity(buffers.map_or(0, |b| b.len()));
    let buffers = buffers.map(|b| b.iter()).into_iter().flatten();
    let mut offset: u64 = 0;
    // Also what fits in an allocation here (2 GiB on wasm32), so that the lengths below
    // convert to usize unchanged.
    let max = limits.max_decompressed_bytes.min(isize::MAX as u64);
    for (index, buffer) in buffers.enumerate() {
        let bytes = super::buffer_bytes(body, index, buffer)?;
        let slot = if bytes.is_empty() {
            Slot {
                source: bytes,
                codec: None,
                offset: offset as usize,
                len: 0,
            }
        } else {
            let (prefix, rest) = bytes.split_at_checked(8).ok_or_else(|| {
                QuiverError::invalid(format!(
                    "compressed buffer {index} needs an 8-byte length prefix, found {} bytes",
                    bytes.len()
                ))
            })?;
            let declared = i64::from_le_bytes(prefix.try_into().unwrap_or([0; 8]));
            let (codec, len) = match declared {
                -1 => (None, rest.len() as u64),
                n if n >= 0 => (Some(codec), n as u64),
                n => {
                    return Err(QuiverError::invalid(format!(
                        "compressed buffer {index} declares {n} uncompressed bytes"
                    )))
                }
            };
            let end = offset.saturating_add(len.saturating_add(7) & !7);
            if end > max {
                return Err(QuiverError::LimitExceeded {
                    what: "decompressed message body",
                    limit: "maxDecompressedBytes",
                    found: end,
                    max,
                });
            }
            Slot {
                source: rest,
                codec,
                offset: offset as usize,
                len: len as usize,
            }
        };
        offset += padded(slot.len) as u64;
        slots.push(slot);
    }
    Ok(slots)
}

fn padded(len: usize) -> usize {
    (len + 7) & !7
}

/// Builds, in `fbb`, the same record batch table with the new buffer locations and no
/// compression field.
fn plain_metadata(
    fbb: &mut FlatBufferBuilder<'static>,
    batch: arrow_ipc::RecordBatch<'_>,
    slots: &[Slot<'_>],
) {
    fbb.reset();
    // Written straight from the source vectors, with no Vec in between: this runs per batch.
    let nodes = batch
        .nodes()
        .map(|n| fbb.create_vector_from_iter(n.iter().copied()));
    let buffers = slots
        .iter()
        .map(|s| arrow_ipc::Buffer::new(s.offset as i64, s.len as i64));
    let buffers = fbb.create_vector_from_iter(buffers);
    let variadic = batch
        .variadicBufferCounts()
        .map(|v| fbb.create_vector_from_iter(v.iter()));
    let args = arrow_ipc::RecordBatchArgs {
        length: batch.length(),
        nodes,
        buffers: Some(buffers),
        compression: None,
        variadicBufferCounts: variadic,
    };
    let record_batch = arrow_ipc::RecordBatch::create(fbb, &args);
    fbb.finish(record_batch, None);
}
