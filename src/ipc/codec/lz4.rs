//! LZ4_FRAME decompression straight into the caller's output.
//!
//! lz4_flex's `FrameDecoder` decodes each block into a buffer of its own (allocated per
//! frame: 192 KiB for linked 64 KiB blocks, 64 KiB of it zero-filled per block) and then
//! copies the bytes out. For the few-KiB buffers of a typical batch, that took most of
//! the decode time. This module reads the frame format
//! (<https://github.com/lz4/lz4/blob/dev/doc/lz4_Frame_format.md>) and hands each block to
//! lz4_flex's block decoder, which writes in place: nothing allocated, nothing copied
//! twice.

use std::hash::Hasher;

use lz4_flex::block::{decompress_into, decompress_into_with_dict};
use twox_hash::XxHash32;

const MAGIC: u32 = 0x184D_2204;
/// How far back a linked block may refer into the blocks before it.
const WINDOW: usize = 64 * 1024;

/// Decompresses the frames of `input`, one after another, into `output`, and returns how
/// many bytes they held. Output that would pass the end of `output` is an error.
pub(crate) fn decompress(mut input: &[u8], output: &mut [u8]) -> Result<usize, String> {
    let mut written = 0;
    while !input.is_empty() {
        let mut frame = Frame {
            input,
            output: &mut *output,
            start: written,
            written,
        };
        frame.decode()?;
        (input, written) = (frame.input, frame.written);
    }
    Ok(written)
}

/// One frame being decoded: what is left of the input, and where its output began and
/// has reached.
struct Frame<'a, 'o> {
    input: &'a [u8],
    output: &'o mut [u8],
    start: usize,
    written: usize,
}

impl<'a> Frame<'a, '_> {
    fn decode(&mut self) -> Result<(), String> {
        let header = self.header()?;
        let mut hasher = header.content_checksum.then(|| XxHash32::with_seed(0));
        loop {
            let word = u32::from_le_bytes(self.take_array("a block size")?);
            if word == 0 {
                break;
            }
            let (stored, len) = (word & 0x8000_0000 != 0, (word & 0x7FFF_FFFF) as usize);
            if len > header.block_size {
                return Err(format!(
                    "a block of {len} bytes, but the frame's blocks are at most {}",
                    header.block_size
                ));
            }
            let block = self.take(len, "a block")?;
            if header.block_checksums {
                let expected = u32::from_le_bytes(self.take_array("a block checksum")?);
                if xxh32(block) != expected {
                    return Err("a block's checksum does not match its bytes".into());
                }
            }
            let at = self.written;
            let n = self.block(block, stored, &header)?;
            if let Some(hasher) = hasher.as_mut() {
                hasher.write(&self.output[at..at + n]);
            }
        }
        let content = self.written - self.start;
        if let Some(declared) = header.content_size {
            if declared != content as u64 {
                return Err(format!(
                    "the frame declares {declared} bytes of content and holds {content}"
                ));
            }
        }
        if let Some(hasher) = hasher {
            let expected = u32::from_le_bytes(self.take_array("the content checksum")?);
            if hasher.finish() as u32 != expected {
                return Err("the content checksum does not match the decompressed bytes".into());
            }
        }
        Ok(())
    }

    /// Decodes one block into the output, after what is there; returns its length.
    fn block(&mut self, block: &[u8], stored: bool, header: &Header) -> Result<usize, String> {
        let Header {
            linked, block_size, ..
        } = *header;
        let (at, declared) = (self.written, self.output.len());
        let room = declared - at;
        let too_long = || format!("expands to more than the declared {declared} bytes");
        let n = if stored {
            if block.len() > room {
                return Err(too_long());
            }
            self.output[at..at + block.len()].copy_from_slice(block);
            block.len()
        } else {
            // A block decompresses to at most the frame's block size.
            let end = at + block_size.min(room);
            let (before, target) = self.output[..end].split_at_mut(at);
            let window = &before[self.start.max(at.saturating_sub(WINDOW))..];
            let decoded = if linked && !window.is_empty() {
                decompress_into_with_dict(block, target, window)
            } else {
                decompress_into(block, target)
            };
            decoded.map_err(|e| match e {
                lz4_flex::block::DecompressError::OutputTooSmall { .. } if room < block_size => {
                    too_long()
                }
                e => format!("a block is corrupt: {e}"),
            })?
        };
        self.written += n;
        Ok(n)
    }

    /// Reads the frame descriptor and checks its checksum.
    fn header(&mut self) -> Result<Header, String> {
        let descriptor_start = self.input;
        let magic = u32::from_le_bytes(self.take_array("the magic number")?);
        if magic != MAGIC {
            return Err(format!(
                "expected the LZ4 frame magic number 0x{MAGIC:08X}, found 0x{magic:08X}"
            ));
        }
        let [flags, bd] = self.take_array("the frame descriptor")?;
        if flags >> 6 != 0b01 {
            return Err(format!("unsupported LZ4 frame version {}", flags >> 6));
        }
        if flags & 0b10 != 0 || bd & 0b1000_1111 != 0 {
            return Err("reserved bits of the frame descriptor are set".into());
        }
        if flags & 0b1 != 0 {
            return Err("the frame needs a dictionary, which IPC bodies never use".into());
        }
        let block_size = match (bd >> 4) & 0b111 {
            4 => 64 << 10,
            5 => 256 << 10,
            6 => 1 << 20,
            7 => 4 << 20,
            id => return Err(format!("unknown block size id {id}")),
        };
        let content_size = if flags & 0b1000 != 0 {
            Some(u64::from_le_bytes(self.take_array("the content size")?))
        } else {
            None
        };
        let described = descriptor_start.len() - self.input.len();
        let [checksum] = self.take_array("the header checksum")?;
        if (xxh32(&descriptor_start[4..described]) >> 8) as u8 != checksum {
            return Err("the frame descriptor's checksum does not match".into());
        }
        Ok(Header {
            linked: flags & 0b10_0000 == 0,
            block_checksums: flags & 0b1_0000 != 0,
            content_checksum: flags & 0b100 != 0,
            content_size,
            block_size,
        })
    }

    fn take(&mut self, len: usize, what: &str) -> Result<&'a [u8], String> {
        if self.input.len() < len {
            return Err(format!(
                "the frame ends inside {what}: {len} bytes needed, {} left",
                self.input.len()
            ));
        }
        let (taken, rest) = self.input.split_at(len);
        self.input = rest;
        Ok(taken)
    }

    fn take_array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], String> {
        let bytes = self.take(N, what)?;
        Ok(std::array::from_fn(|i| bytes[i]))
    }
}

/// What a frame descriptor says about the blocks that follow it.
struct Header {
    /// Blocks may refer to the 64 KiB of output before them.
    linked: bool,
    block_checksums: bool,
    content_checksum: bool,
    content_size: Option<u64>,
    block_size: usize,
}

fn xxh32(bytes: &[u8]) -> u32 {
    XxHash32::oneshot(0, bytes)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use lz4_flex::frame::{BlockMode, BlockSize, FrameEncoder, FrameInfo};

    use super::decompress;
    use crate::TestResult;

    /// 600 KB over ten blocks: an incompressible stretch, which the encoder stores as it
    /// is, then a repeating pattern. (Blocks that refer back into the block before are
    /// tested on pyarrow's frames, in tests/pyarrow_streams.rs.)
    fn data() -> Vec<u8> {
        let mut state = 0x2545_F491_u32;
        let mut noise = || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state as u8
        };
        let mut data: Vec<u8> = (0..150_000u32).map(|_| noise()).collect();
        let pattern: Vec<u8> = (0..70_000u32)
            .map(|i| (i % 253) as u8 ^ (i / 997) as u8)
            .collect();
        while data.len() < 600_000 {
            data.extend_from_slice(&pattern);
        }
        data
    }

    fn frame(data: &[u8], info: FrameInfo) -> TestResult<Vec<u8>> {
        let mut encoder = FrameEncoder::with_frame_info(info, Vec::new());
        encoder.write_all(data)?;
        Ok(encoder.finish()?)
    }

    fn assert_decodes_to(packed: &[u8], data: &[u8]) {
        let mut out = vec![0; data.len()];
        assert_eq!(decompress(packed, &mut out), Ok(data.len()));
        assert!(out == data);
    }

    #[test]
    fn every_kind_of_frame_decodes_in_place() -> TestResult {
        let data = data();
        let kinds = [
            FrameInfo::new(),
            FrameInfo::new().block_mode(BlockMode::Independent),
            FrameInfo::new()
                .block_size(BlockSize::Max256KB)
                .block_checksums(true)
                .content_checksum(true)
                .content_size(Some(data.len() as u64)),
        ];
        for info in kinds {
            assert_decodes_to(&frame(&data, info)?, &data);
        }
        Ok(())
    }

    #[test]
    fn concatenated_frames_decode_one_after_another() -> TestResult {
        let data = data();
        let (a, b) = data.split_at(100_000);
        let mut packed = frame(a, FrameInfo::new())?;
        packed.extend(frame(b, FrameInfo::new())?);
        assert_decodes_to(&packed, &data);
        Ok(())
    }

    #[test]
    fn damage_is_an_error_that_says_where() -> TestResult {
        let data = data();
        let info = FrameInfo::new()
            .block_checksums(true)
            .content_checksum(true)
            .content_size(Some(data.len() as u64));
        let packed = frame(&data, info)?;
        let mut out = vec![0; data.len()];
        let mut check = |packed: &[u8], expected: &str| {
            let error = decompress(packed, &mut out).unwrap_err();
            assert!(error.contains(expected), "{error}");
        };
        check(
            &packed[..packed.len() - 3],
            "the frame ends inside the content checksum",
        );
        check(&packed[..1000], "the frame ends inside a block");
        let mut flipped = packed.clone();
        flipped[6] ^= 1; // in the content size
        check(&flipped, "descriptor's checksum does not match");
        let mut flipped = packed.clone();
        flipped[2000] ^= 1;
        check(&flipped, "a block's checksum does not match");
        let mut flipped = packed.clone();
        *flipped.last_mut().ok_or("an empty frame")? ^= 1;
        check(&flipped, "content checksum does not match");
        check(
            b"\x04\x22\x4d\x18\x40",
            "the frame ends inside the frame descriptor",
        );
        check(b"not a frame", "expected the LZ4 frame magic number");
        Ok(())
    }

    #[test]
    fn corrupt_blocks_without_checksums_are_errors() -> TestResult {
        let data = &data()[140_000..260_000];
        let packed = frame(data, FrameInfo::new())?;
        // Every byte of the first compressed block, flipped in turn: never a panic, and
        // an error or different bytes, never more than the output holds.
        let mut out = vec![0; data.len()];
        for at in 7..packed.len().min(3000) {
            let mut flipped = packed.clone();
            flipped[at] ^= 0x5A;
            if let Ok(n) = decompress(&flipped, &mut out) {
                assert!(n <= data.len());
            }
        }
        Ok(())
    }

    #[test]
    fn output_past_the_declared_size_is_refused() -> TestResult {
        let data = data();
        for info in [
            FrameInfo::new(),
            FrameInfo::new().block_mode(BlockMode::Independent),
        ] {
            let packed = frame(&data, info)?;
            let mut out = vec![0; data.len() - 1];
            assert_eq!(
                decompress(&packed, &mut out),
                Err(format!(
                    "expands to more than the declared {} bytes",
                    data.len() - 1
                ))
            );
        }
        Ok(())
    }
}
