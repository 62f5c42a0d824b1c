//! The ZSTD backends behind one small trait, so the reader and the writer do not know
//! which one runs. `ruzstd` (pure Rust) is the default; the `zstd-c` feature selects C
//! zstd (the `zstd` crate), which decodes several times faster and needs clang to build
//! for wasm32 (see pkg-scripts/build.sh).

use std::io::Cursor;

use arrow_buffer::Buffer;
use ruzstd::encoding::{CompressionLevel, FrameCompressor, MatchGeneratorDriver};

/// A ZSTD codec that keeps its state between buffers.
pub trait ZstdBackend: Default {
    /// Whether the backend decodes into a window of its own and then copies the output out:
    /// a second copy of every decompressed byte, which the reader counts.
    const COPIES_OUT_OF_WINDOW: bool;

    /// Whether the backend copies the input into a buffer of its own before compressing
    /// it, which the writer counts.
    const STAGES_INPUT: bool;

    /// Decompresses `input` into `output`, never writing past it; returns the bytes written.
    /// A frame that expands beyond `output` is an error, not a reallocation.
    fn decompress(&mut self, input: &[u8], output: &mut [u8]) -> Result<usize, String>;

    /// Appends one ZSTD frame holding `input` to `output`.
    fn compress(&mut self, input: &Buffer, level: i32, output: &mut Vec<u8>) -> Result<(), String>;
}

/// The backend this build uses.
#[cfg(not(feature = "zstd-c"))]
pub type Zstd = Ruzstd;
#[cfg(feature = "zstd-c")]
pub type Zstd = CZstd;

/// ruzstd: pure Rust, about 1.7× fzstd's decode speed in wasm. It compresses at its
/// `Fastest` level only (about zstd level 1): ruzstd 0.9 implements no other.
#[derive(Default)]
pub struct Ruzstd {
    decoder: ruzstd::decoding::FrameDecoder,
    /// Boxed: the compressor holds its tables inline (about 50 KB), which every move of a
    /// reader or writer would otherwise copy.
    encoder: Option<Box<Compressor>>,
}

/// The window a ZSTD frame may declare beyond its output's size (see `Ruzstd::decompress`).
const MAX_WINDOW_FLOOR: u64 = 8 << 20;

/// ruzstd's compressor owns its source: a cursor over a shared `Buffer`.
type Compressor = FrameCompressor<Cursor<Buffer>, Vec<u8>, MatchGeneratorDriver>;

impl ZstdBackend for Ruzstd {
    const COPIES_OUT_OF_WINDOW: bool = true;
    const STAGES_INPUT: bool = true;

    fn decompress(&mut self, input: &[u8], output: &mut [u8]) -> Result<usize, String> {
        // ruzstd allocates the window a frame declares before decoding it, and keeps it.
        // A frame needs no more history than its output, but writers round windows up, to
        // 8 MiB at zstd's level 19: so the window may be the larger of the two, which a
        // 1-byte frame declaring ruzstd's own 128 MiB limit cannot make it allocate.
        self.decoder
            .set_max_window_size((output.len() as u64).max(MAX_WINDOW_FLOOR));
        // decode_all fails with TargetTooSmall rather than grow `output`.
        self.decoder
            .decode_all(input, output)
            .map_err(|e| e.to_string())
    }

    fn compress(&mut self, input: &Buffer, _: i32, output: &mut Vec<u8>) -> Result<(), String> {
        let encoder = self
            .encoder
            .get_or_insert_with(|| Box::new(FrameCompressor::new(CompressionLevel::Fastest)));
        // ruzstd's compressor owns its source: a cursor over the shared Buffer (no copy),
        // released after the frame so the caller's buffer is unshared again.
        encoder.set_source(Cursor::new(input.clone()));
        encoder.set_drain(std::mem::take(output));
        encoder.compress();
        encoder.take_source();
        *output = encoder.take_drain().unwrap_or_default();
        Ok(())
    }
}

/// C zstd through the `zstd` crate: contexts are kept and reused.
#[cfg(feature = "zstd-c")]
#[derive(Default)]
pub struct CZstd {
    decoder: Option<zstd::bulk::Decompressor<'static>>,
    encoder: Option<(i32, zstd::bulk::Compressor<'static>)>,
}

#[cfg(feature = "zstd-c")]
impl ZstdBackend for CZstd {
    const COPIES_OUT_OF_WINDOW: bool = false;
    const STAGES_INPUT: bool = false;

    fn decompress(&mut self, input: &[u8], output: &mut [u8]) -> Result<usize, String> {
        let decoder = match &mut self.decoder {
            Some(decoder) => decoder,
            None => self
                .decoder
                .insert(zstd::bulk::Decompressor::new().map_err(|e| e.to_string())?),
        };
        // A one-shot decode into a fixed slice: "Destination buffer is too small" rather
        // than growth, and no window buffer beyond `output`.
        decoder
            .decompress_to_buffer(input, output)
            .map_err(|e| e.to_string())
    }

    fn compress(&mut self, input: &Buffer, level: i32, output: &mut Vec<u8>) -> Result<(), String> {
        let encoder = match &mut self.encoder {
            Some((current, encoder)) if *current == level => encoder,
            _ => {
                let encoder = zstd::bulk::Compressor::new(level).map_err(|e| e.to_string())?;
                &mut self.encoder.insert((level, encoder)).1
            }
        };
        let start = output.len();
        output.reserve(zstd::zstd_safe::compress_bound(input.len()));
        let mut tail = Cursor::new(output);
        tail.set_position(start as u64);
        encoder
            .compress_to_buffer(input.as_slice(), &mut tail)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}
