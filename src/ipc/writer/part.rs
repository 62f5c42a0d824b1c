//! One buffer of a message body as it will be written: stored bytes, or offsets, run ends
//! and bitmaps of a sliced array that are rebased or shifted on their way to the sink.
//! `body.rs` plans which parts a message has.

use arrow_buffer::bit_chunk_iterator::BitChunks;
use arrow_buffer::Buffer;

use crate::ipc::error::Result;

/// Where a part's bytes go: a chunk, or a scratch `Vec` that is compressed next.
pub(crate) trait Sink {
    fn put(&mut self, bytes: &[u8]) -> Result<()>;
}

impl Sink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        self.extend_from_slice(bytes);
        Ok(())
    }
}

/// One body buffer, as it will be written.
pub(crate) enum Part {
    /// Bytes written as they are.
    Bytes(Buffer),
    /// `n` zero bytes (an empty buffer, or the single offset of an empty list).
    Zeros(usize),
    /// Little-endian integers of `width` bytes, each written as `min(value - base, max)`:
    /// sliced offsets rebased to 0, and sliced run ends cut at the slice's length.
    Ints {
        source: Buffer,
        width: usize,
        base: i64,
        max: i64,
    },
    /// `len` bits from bit `offset` of `source`, shifted to start at bit 0.
    Bits {
        source: Buffer,
        offset: usize,
        len: usize,
    },
}

/// Transformed parts go through a stack block of this size on their way to the sink.
const BLOCK: usize = 512;

impl Part {
    /// The unpadded length in bytes.
    pub(crate) fn len(&self) -> usize {
        match self {
            Part::Bytes(b) => b.len(),
            Part::Zeros(n) => *n,
            Part::Ints { source, .. } => source.len(),
            Part::Bits { len, .. } => len.div_ceil(8),
        }
    }

    /// The part as it is stored, if it needs no transformation.
    pub(crate) fn as_buffer(&self) -> Option<&Buffer> {
        match self {
            Part::Bytes(b) => Some(b),
            _ => None,
        }
    }

    pub(crate) fn write(&self, sink: &mut impl Sink) -> Result<()> {
        match self {
            Part::Bytes(b) => sink.put(b),
            Part::Zeros(n) => {
                let zeros = [0u8; 8];
                (0..*n)
                    .step_by(8)
                    .try_for_each(|at| sink.put(&zeros[..8.min(n - at)]))
            }
            Part::Ints {
                source,
                width,
                base,
                max,
            } => {
                let mut block = [0u8; BLOCK];
                for piece in source.chunks(BLOCK) {
                    for (dst, src) in block
                        .chunks_exact_mut(*width)
                        .zip(piece.chunks_exact(*width))
                    {
                        let value = read_int(src).wrapping_sub(*base).min(*max);
                        dst.copy_from_slice(&value.to_le_bytes()[..*width]);
                    }
                    sink.put(&block[..piece.len()])?;
                }
                Ok(())
            }
            Part::Bits {
                source,
                offset,
                len,
            } => {
                let chunks = BitChunks::new(source, *offset, *len);
                let mut block = [0u8; BLOCK];
                let mut filled = 0;
                for word in chunks.iter() {
                    block[filled..filled + 8].copy_from_slice(&word.to_le_bytes());
                    filled += 8;
                    if filled == BLOCK {
                        sink.put(&block)?;
                        filled = 0;
                    }
                }
                sink.put(&block[..filled])?;
                let tail = chunks.remainder_len().div_ceil(8);
                sink.put(&chunks.remainder_bits().to_le_bytes()[..tail])
            }
        }
    }
}

/// A little-endian signed integer of 1 to 8 bytes.
pub(super) fn read_int(bytes: &[u8]) -> i64 {
    let mut wide = [0u8; 8];
    wide[..bytes.len()].copy_from_slice(bytes);
    let shift = 64 - 8 * bytes.len() as u32;
    // Shift up and back down to sign-extend.
    (i64::from_le_bytes(wide) << shift) >> shift
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TestResult;

    fn written(part: &Part) -> TestResult<Vec<u8>> {
        let mut out = Vec::new();
        part.write(&mut out)?;
        assert_eq!(out.len(), part.len());
        Ok(out)
    }

    #[test]
    fn ints_are_rebased_and_capped() -> TestResult {
        let source = Buffer::from_vec(vec![5i32, 7, 12, 40]);
        let part = Part::Ints {
            source,
            width: 4,
            base: 5,
            max: 30,
        };
        let expected: Vec<u8> = [0i32, 2, 7, 30]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(written(&part)?, expected);
        assert_eq!(read_int(&(-3i16).to_le_bytes()), -3);
        Ok(())
    }

    #[test]
    fn bits_are_shifted_to_bit_zero() -> TestResult {
        // 1000 bits, so that the shift crosses a block boundary.
        let bools: Vec<bool> = (0..1000).map(|i| i % 3 == 0 || i % 7 == 0).collect();
        let buffer = arrow_buffer::BooleanBuffer::from(bools.as_slice()).into_inner();
        for offset in [1, 3, 9] {
            let len = 1000 - offset - 2;
            let out = written(&Part::Bits {
                source: buffer.clone(),
                offset,
                len,
            })?;
            for i in 0..len {
                assert_eq!(out[i / 8] >> (i % 8) & 1 == 1, bools[offset + i], "bit {i}");
            }
        }
        Ok(())
    }

    #[test]
    fn zeros_of_any_length() -> TestResult {
        assert_eq!(written(&Part::Zeros(0))?, Vec::<u8>::new());
        assert_eq!(written(&Part::Zeros(20))?, vec![0; 20]);
        Ok(())
    }
}
