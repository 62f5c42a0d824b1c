//! Chunks: the allocations one write produces, each sized before a byte is written.

use super::options::ChunkSizing;
use crate::ipc::error::{QuiverError, Result};

/// The output of one write: one or more chunks per message, in stream order. Each chunk
/// is its own allocation; concatenated they are the bytes of the stream.
#[derive(Debug, Default)]
pub struct Chunks {
    chunks: Vec<Vec<u8>>,
    /// Whether each chunk ends its message. A chunk never spans two messages, so a
    /// sender that must flag message boundaries (Flight DoPut frames) reads them here.
    ends: Vec<bool>,
    byte_length: usize,
}

impl Chunks {
    pub fn count(&self) -> usize {
        self.chunks.len()
    }

    /// Total bytes over all chunks.
    pub fn byte_length(&self) -> usize {
        self.byte_length
    }

    pub fn chunk(&self, index: usize) -> Option<&[u8]> {
        self.chunks.get(index).map(Vec::as_slice)
    }

    /// Whether chunk `index` ends a message (the next chunk, if any, starts one).
    pub fn ends_message(&self, index: usize) -> bool {
        self.ends.get(index).copied().unwrap_or(false)
    }

    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        self.chunks.iter().map(Vec::as_slice)
    }

    /// The length of every chunk, as one table.
    pub fn lengths(&self) -> Vec<u32> {
        // Writers cap chunks at u32::MAX bytes (see `WriteOptions::validate`).
        self.iter().map(|c| c.len() as u32).collect()
    }

    /// Where each chunk starts in the concatenated output, as one table.
    pub fn offsets(&self) -> Vec<u32> {
        // Writers refuse a write longer than u32::MAX bytes (see `ChunkWriter::begin`).
        self.iter()
            .scan(0u32, |at, c| {
                let start = *at;
                *at = at.wrapping_add(c.len() as u32);
                Some(start)
            })
            .collect()
    }

    /// All chunks in one new `Vec` (a copy).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.byte_length);
        self.iter().for_each(|c| out.extend_from_slice(c));
        out
    }

    pub(crate) fn append(&mut self, other: Chunks) {
        self.byte_length += other.byte_length;
        self.chunks.extend(other.chunks);
        self.ends.extend(other.ends);
    }
}

/// Writes messages of known size into `Chunks`, cutting them at the chunk cap.
pub(crate) struct ChunkWriter {
    out: Chunks,
    max_chunk_bytes: usize,
    sizing: ChunkSizing,
    /// The chunk being filled, its planned length, and the bytes the message still owes.
    current: Vec<u8>,
    planned: usize,
    remaining: usize,
    /// Bytes copied beyond writing each output byte once (the fixed mode's shrink copies).
    pub(crate) extra_copied: u64,
}

impl ChunkWriter {
    pub(crate) fn new(max_chunk_bytes: usize, sizing: ChunkSizing) -> Self {
        ChunkWriter {
            out: Chunks::default(),
            max_chunk_bytes,
            sizing,
            current: Vec::new(),
            planned: 0,
            remaining: 0,
            extra_copied: 0,
        }
    }

    /// Starts a message of exactly `size` bytes.
    pub(crate) fn begin(&mut self, size: usize) -> Result<()> {
        self.check_complete()?;
        let total = self.out.byte_length + size;
        if total > u32::MAX as usize {
            return Err(QuiverError::Unsupported(format!(
                "one write of {total} bytes: Chunks describe at most {} bytes",
                u32::MAX
            )));
        }
        self.remaining = size;
        Ok(())
    }

    /// Appends bytes of the current message, opening chunks as they fill.
    pub(crate) fn put(&mut self, mut bytes: &[u8]) -> Result<()> {
        if bytes.len() > self.remaining {
            return Err(QuiverError::Internal(format!(
                "message planned with {} more bytes, writing {}",
                self.remaining,
                bytes.len()
            )));
        }
        while !bytes.is_empty() {
            if self.current.len() == self.planned {
                self.open_chunk()?;
            }
            let n = (self.planned - self.current.len()).min(bytes.len());
            let (now, rest) = bytes.split_at(n);
            self.current.extend_from_slice(now);
            self.remaining -= n;
            bytes = rest;
            if self.remaining == 0 || self.current.len() == self.planned {
                self.close_chunk()?;
            }
        }
        Ok(())
    }

    fn open_chunk(&mut self) -> Result<()> {
        self.planned = self.remaining.min(self.max_chunk_bytes);
        let size = match self.sizing {
            ChunkSizing::Exact => self.planned,
            ChunkSizing::Fixed => self.max_chunk_bytes,
        };
        let mut chunk = allocate(size)?;
        if self.sizing == ChunkSizing::Fixed {
            // Zeroed at the cap, like a pooled fixed-size page; writing into it through
            // `extend` keeps one code path, while the allocation is what the old way paid.
            chunk.resize(size, 0);
            chunk.clear();
        }
        self.current = chunk;
        Ok(())
    }

    fn close_chunk(&mut self) -> Result<()> {
        let chunk = std::mem::take(&mut self.current);
        let chunk = match self.sizing {
            ChunkSizing::Exact => chunk,
            ChunkSizing::Fixed => {
                self.extra_copied += chunk.len() as u64;
                let mut fitted = allocate(chunk.len())?;
                fitted.extend_from_slice(&chunk);
                fitted
            }
        };
        self.out.byte_length += chunk.len();
        self.out.chunks.push(chunk);
        self.out.ends.push(self.remaining == 0);
        self.planned = 0;
        Ok(())
    }

    fn check_complete(&self) -> Result<()> {
        match self.remaining {
            0 => Ok(()),
            owed => Err(QuiverError::Internal(format!(
                "message ended {owed} bytes short of its planned size"
            ))),
        }
    }

    pub(crate) fn finish(self) -> Result<Chunks> {
        self.check_complete()?;
        Ok(self.out)
    }
}

/// An empty chunk with room for `size` bytes, or an error: wasm memory ends at 4 GiB, and
/// a chunk may ask for up to that.
fn allocate(size: usize) -> Result<Vec<u8>> {
    let mut chunk = Vec::new();
    chunk.try_reserve_exact(size).map_err(|_| {
        QuiverError::Usage(format!(
            "cannot allocate a {size}-byte chunk: wasm memory holds at most 4 GiB (a \
             smaller maxChunkBytes cuts messages into smaller chunks)"
        ))
    })?;
    Ok(chunk)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TestResult;

    fn write(sizing: ChunkSizing, cap: usize, messages: &[&[u8]]) -> TestResult<Chunks> {
        let mut writer = ChunkWriter::new(cap, sizing);
        for m in messages {
            writer.begin(m.len())?;
            // Uneven pieces, to cross chunk boundaries inside a `put`.
            for piece in m.chunks(5) {
                writer.put(piece)?;
            }
        }
        Ok(writer.finish()?)
    }

    #[test]
    fn messages_split_at_the_cap_and_start_new_chunks() -> TestResult {
        let a: Vec<u8> = (0..20).collect();
        let b: Vec<u8> = (100..108).collect();
        let chunks = write(ChunkSizing::Exact, 8, &[&a, &b])?;
        assert_eq!(chunks.lengths(), vec![8, 8, 4, 8]);
        let ends: Vec<bool> = (0..4).map(|i| chunks.ends_message(i)).collect();
        assert_eq!(ends, [false, false, true, true]);
        assert_eq!(chunks.offsets(), vec![0, 8, 16, 20]);
        assert_eq!(chunks.to_vec(), [a.as_slice(), &b].concat());
        for c in chunks.iter() {
            assert_eq!(c.len(), c.len().min(8));
        }
        Ok(())
    }

    #[test]
    fn exact_chunks_are_allocated_at_their_size() -> TestResult {
        let a = vec![1u8; 13];
        let chunks = write(ChunkSizing::Exact, 1 << 20, &[&a])?;
        assert_eq!(chunks.chunks[0].capacity(), 13);
        Ok(())
    }

    #[test]
    fn fixed_chunks_give_the_same_bytes() -> TestResult {
        let a: Vec<u8> = (0..50).collect();
        let exact = write(ChunkSizing::Exact, 16, &[&a])?;
        let fixed = write(ChunkSizing::Fixed, 16, &[&a])?;
        assert_eq!(exact.to_vec(), fixed.to_vec());
        assert_eq!(exact.lengths(), fixed.lengths());
        Ok(())
    }

    #[test]
    fn writing_past_the_plan_is_an_error() -> TestResult {
        let mut writer = ChunkWriter::new(8, ChunkSizing::Exact);
        writer.begin(2)?;
        let err = writer.put(&[1, 2, 3]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "internal error (please report): message planned with 2 more bytes, writing 3"
        );
        let mut writer = ChunkWriter::new(8, ChunkSizing::Exact);
        writer.begin(2)?;
        writer.put(&[1])?;
        assert!(writer.finish().is_err());
        Ok(())
    }
}
