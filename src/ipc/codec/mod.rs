//! LZ4_FRAME and ZSTD for IPC body buffers: `lz4_flex`, and ZSTD through the backend in
//! [`zstd`] (pure-Rust `ruzstd` by default, C zstd with the `zstd-c` feature).
//!
//! arrow-ipc's own `zstd` feature links C zstd, which does not build for wasm32 without a
//! C toolchain, so Quiver decompresses bodies itself and hands arrow-ipc plain buffers.
//! Both directions write into a caller-sized output and refuse to grow it, which is what
//! stops a decompression bomb.

mod lz4;
pub mod zstd;

use std::io::Write;

use arrow_buffer::Buffer;
use arrow_ipc::CompressionType;
use lz4_flex::frame::{BlockSize, FrameEncoder, FrameInfo};

use self::zstd::{Zstd, ZstdBackend};
use super::error::{QuiverError, Result};

/// The body codecs of the IPC format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    Lz4Frame,
    Zstd,
}

impl Compression {
    pub fn name(self) -> &'static str {
        match self {
            Compression::Lz4Frame => "LZ4_FRAME",
            Compression::Zstd => "ZSTD",
        }
    }

    pub(crate) fn from_ipc(codec: CompressionType) -> Result<Self> {
        match codec {
            CompressionType::LZ4_FRAME => Ok(Compression::Lz4Frame),
            CompressionType::ZSTD => Ok(Compression::Zstd),
            other => Err(QuiverError::invalid(format!(
                "expected body compression LZ4_FRAME or ZSTD, found codec {}",
                other.0
            ))),
        }
    }

    #[cfg(feature = "writer")]
    pub(crate) fn to_ipc(self) -> CompressionType {
        match self {
            Compression::Lz4Frame => CompressionType::LZ4_FRAME,
            Compression::Zstd => CompressionType::ZSTD,
        }
    }
}

/// Codec state kept for the life of a stream, so each buffer does not pay for a new
/// decoder's tables or a new encoder's window and hash tables.
pub struct Codecs {
    zstd: Zstd,
    zstd_level: i32,
    lz4_encoder: Option<FrameEncoder<Vec<u8>>>,
}

impl Default for Codecs {
    fn default() -> Self {
        Codecs::with_zstd_level(1)
    }
}

impl Codecs {
    /// Codecs that compress ZSTD at `level` (where the backend supports levels).
    pub fn with_zstd_level(zstd_level: i32) -> Self {
        Codecs {
            zstd: Zstd::default(),
            zstd_level,
            lz4_encoder: None,
        }
    }

    /// Decompresses `input` into exactly `output.len()` bytes. Output that would be shorter
    /// or longer than declared is an error, and nothing beyond `output` is allocated for
    /// the data but ruzstd's window (the larger of `output.len()` and 8 MiB). Returns the bytes
    /// the codec copied on the way: ruzstd decodes into its window and copies the output
    /// out of it; LZ4 and C zstd write straight into `output`.
    pub fn decompress(
        &mut self,
        codec: Compression,
        input: &[u8],
        output: &mut [u8],
    ) -> Result<usize> {
        let written = match codec {
            Compression::Lz4Frame => lz4::decompress(input, output),
            Compression::Zstd => self.zstd.decompress(input, output),
        }
        .map_err(|detail| QuiverError::Codec {
            codec: codec.name(),
            detail,
        })?;
        if written != output.len() {
            return Err(QuiverError::Codec {
                codec: codec.name(),
                detail: format!(
                    "declared {} uncompressed bytes, decompressed {written}",
                    output.len()
                ),
            });
        }
        let copied = codec == Compression::Zstd && Zstd::COPIES_OUT_OF_WINDOW;
        Ok(if copied { written } else { 0 })
    }

    /// Appends the compressed form of `input` to `output`, as one LZ4 or ZSTD frame.
    /// Returns the bytes the codec copied on the way: lz4_flex's frame encoder and ruzstd
    /// copy the input into a buffer of their own first; C zstd reads it where it is.
    pub fn compress(
        &mut self,
        codec: Compression,
        input: &Buffer,
        output: &mut Vec<u8>,
    ) -> Result<usize> {
        let staged = match codec {
            Compression::Lz4Frame => true,
            Compression::Zstd => Zstd::STAGES_INPUT,
        };
        self.compress_frame(codec, input, output)?;
        Ok(if staged { input.len() } else { 0 })
    }

    fn compress_frame(
        &mut self,
        codec: Compression,
        input: &Buffer,
        output: &mut Vec<u8>,
    ) -> Result<()> {
        match codec {
            Compression::Lz4Frame => {
                // A fixed block size: lz4_flex's default picks one from the first buffer
                // it ever compresses and keeps it, so a frame's size would depend on what
                // the writer compressed before (and differ from `messageSize`'s).
                let encoder = self.lz4_encoder.get_or_insert_with(|| {
                    let info = FrameInfo::new().block_size(BlockSize::Max64KB);
                    FrameEncoder::with_frame_info(info, Vec::new())
                });
                // The encoder writes into its own Vec; lend it `output` for this frame.
                std::mem::swap(encoder.get_mut(), output);
                let outcome = encoder
                    .write_all(input)
                    .and_then(|_| encoder.try_finish().map_err(std::io::Error::other));
                std::mem::swap(encoder.get_mut(), output);
                outcome.map_err(|e| QuiverError::Codec {
                    codec: codec.name(),
                    detail: e.to_string(),
                })
            }
            Compression::Zstd => {
                self.zstd
                    .compress(input, self.zstd_level, output)
                    .map_err(|detail| QuiverError::Codec {
                        codec: codec.name(),
                        detail,
                    })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TestResult;

    fn round_trip(codec: Compression) -> TestResult {
        let data: Vec<u8> = (0..100_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        let mut codecs = Codecs::default();
        let mut packed = Vec::new();
        codecs.compress(codec, &Buffer::from(data.as_slice()), &mut packed)?;
        assert!(packed.len() < data.len());
        let mut out = vec![0; data.len()];
        codecs.decompress(codec, &packed, &mut out)?;
        assert_eq!(out, data);
        // The same state decodes a second buffer.
        codecs.decompress(codec, &packed, &mut out)?;
        assert_eq!(out, data);
        // The same state encodes a second buffer into the same frame, after what is there.
        let mut twice = vec![9u8];
        codecs.compress(codec, &Buffer::from(data.as_slice()), &mut twice)?;
        assert_eq!((twice[0], &twice[1..]), (9, packed.as_slice()));
        Ok(())
    }

    #[test]
    fn codec_state_stays_small() {
        // Readers and writers hold a `Codecs` and are moved by value (ruzstd's compressor
        // alone is about 50 KB, hence boxed).
        assert!(std::mem::size_of::<Codecs>() < 1024);
    }

    #[test]
    fn lz4_round_trip() -> TestResult {
        round_trip(Compression::Lz4Frame)
    }

    #[test]
    fn zstd_round_trip() -> TestResult {
        round_trip(Compression::Zstd)
    }

    fn refuses_bomb(codec: Compression) -> TestResult {
        let data = vec![7u8; 1 << 20];
        let mut codecs = Codecs::default();
        let mut packed = Vec::new();
        codecs.compress(codec, &Buffer::from(data.as_slice()), &mut packed)?;
        // Declared 1 KiB, but the frame expands to 1 MiB.
        let mut out = vec![0; 1024];
        let err = codecs.decompress(codec, &packed, &mut out).unwrap_err();
        assert!(matches!(err, QuiverError::Codec { .. }), "{err}");
        Ok(())
    }

    #[test]
    fn lz4_refuses_bomb() -> TestResult {
        refuses_bomb(Compression::Lz4Frame)
    }

    #[test]
    fn zstd_refuses_bomb() -> TestResult {
        refuses_bomb(Compression::Zstd)
    }

    /// A ZSTD frame of one raw byte, `A`, that declares a window of 2^`window_log` bytes.
    fn one_byte_frame(window_log: u8) -> Vec<u8> {
        let window_descriptor = (window_log - 10) << 3;
        let raw_last_block_of_1_byte = [0x09, 0x00, 0x00];
        let mut frame = vec![0x28, 0xB5, 0x2F, 0xFD, 0x00, window_descriptor];
        frame.extend(raw_last_block_of_1_byte);
        frame.push(b'A');
        frame
    }

    #[test]
    fn zstd_frames_may_declare_windows_up_to_8_mib() -> TestResult {
        let mut out = [0];
        let copied =
            Codecs::default().decompress(Compression::Zstd, &one_byte_frame(23), &mut out)?;
        assert_eq!(out, [b'A']);
        assert!(copied <= 1);
        Ok(())
    }

    /// C zstd decodes a whole frame into its output and allocates no window.
    #[cfg(not(feature = "zstd-c"))]
    #[test]
    fn ruzstd_refuses_a_window_beyond_8_mib_and_the_output() {
        let mut out = [0];
        let err = Codecs::default()
            .decompress(Compression::Zstd, &one_byte_frame(27), &mut out)
            .unwrap_err();
        assert!(err.to_string().contains("window"), "{err}");
    }

    #[test]
    fn short_output_is_an_error() -> TestResult {
        let mut codecs = Codecs::default();
        let mut packed = Vec::new();
        codecs.compress(
            Compression::Lz4Frame,
            &Buffer::from(&[1u8, 2, 3]),
            &mut packed,
        )?;
        let mut out = vec![0; 10];
        let err = codecs
            .decompress(Compression::Lz4Frame, &packed, &mut out)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "LZ4_FRAME buffer is corrupt: declared 10 uncompressed bytes, decompressed 3"
        );
        Ok(())
    }

    #[test]
    fn garbage_is_an_error() {
        let mut codecs = Codecs::default();
        let mut out = vec![0; 10];
        for codec in [Compression::Lz4Frame, Compression::Zstd] {
            assert!(codecs.decompress(codec, b"not a frame", &mut out).is_err());
        }
    }
}
