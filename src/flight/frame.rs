//! Binary frames: a fixed 12-byte little-endian header, then `app_metadata`, then IPC
//! bytes.
//!
//! ```text
//! offset 0  u32  stream id (non-zero)
//! offset 4  u8   kind: 0 = data (IPC bytes), 1 = metadata (app_metadata only)
//! offset 5  u8   flags: bit 0 = FIRST segment of a message, bit 1 = LAST segment
//! offset 6  u16  reserved, 0
//! offset 8  u32  app_metadata length (non-zero only with FIRST)
//! ```

use super::{ProtocolError, Result};

/// Bytes in a frame header.
pub const HEADER_LEN: usize = 12;

/// What a frame's payload holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    /// A segment of the IPC stream, optionally led by the message's `app_metadata`.
    Data = 0,
    /// A `FlightData` with `app_metadata` and no IPC message.
    Metadata = 1,
}

/// Segment-of-message flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Flags {
    /// This frame starts an IPC message (or is a whole metadata frame).
    pub first: bool,
    /// This frame ends an IPC message (or is a whole metadata frame).
    pub last: bool,
}

impl Flags {
    const FIRST: u8 = 1;
    const LAST: u8 = 2;

    /// Both flags: a frame holding a whole message.
    pub const WHOLE: Flags = Flags {
        first: true,
        last: true,
    };

    fn to_byte(self) -> u8 {
        (if self.first { Self::FIRST } else { 0 }) | (if self.last { Self::LAST } else { 0 })
    }

    fn from_byte(b: u8) -> Result<Self> {
        if b & !(Self::FIRST | Self::LAST) != 0 {
            return Err(ProtocolError::ReservedFlags(b));
        }
        Ok(Flags {
            first: b & Self::FIRST != 0,
            last: b & Self::LAST != 0,
        })
    }
}

/// A validated frame header, for a receiver that reads the payload where it lies (the
/// wasm client reads it straight out of the received JS `ArrayBuffer`, never copying the
/// whole frame into wasm memory first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub stream: u32,
    pub kind: FrameKind,
    pub flags: Flags,
    /// Bytes of `app_metadata` right after the header; the rest of the payload is IPC.
    pub app_metadata_len: usize,
}

impl Header {
    /// Validates the header of a frame whose payload (everything after the header) is
    /// `payload_len` bytes. `max_payload` caps `app_metadata` plus IPC bytes.
    pub fn decode(
        header: &[u8; HEADER_LEN],
        payload_len: usize,
        max_payload: usize,
    ) -> Result<Self> {
        let [s0, s1, s2, s3, kind, flags, r0, r1, m0, m1, m2, m3] = *header;
        let stream = u32::from_le_bytes([s0, s1, s2, s3]);
        if stream == 0 {
            return Err(ProtocolError::ZeroStream);
        }
        let kind = match kind {
            0 => FrameKind::Data,
            1 => FrameKind::Metadata,
            other => return Err(ProtocolError::UnknownKind(other)),
        };
        let flags = Flags::from_byte(flags)?;
        let reserved = u16::from_le_bytes([r0, r1]);
        if reserved != 0 {
            return Err(ProtocolError::ReservedField(reserved));
        }
        if payload_len > max_payload {
            return Err(ProtocolError::FrameTooLarge {
                limit: max_payload,
                found: payload_len,
            });
        }
        let declared = u32::from_le_bytes([m0, m1, m2, m3]) as usize;
        if declared > payload_len {
            return Err(ProtocolError::MetadataOverrun {
                declared,
                available: payload_len,
            });
        }
        if declared > 0 && !flags.first {
            return Err(ProtocolError::MetadataNotFirst);
        }
        let ipc_len = payload_len - declared;
        match kind {
            FrameKind::Metadata if flags != Flags::WHOLE || ipc_len > 0 => {
                Err(ProtocolError::BadMetadataFrame)
            }
            FrameKind::Data if ipc_len == 0 => Err(ProtocolError::EmptyData),
            _ => Ok(Header {
                stream,
                kind,
                flags,
                app_metadata_len: declared,
            }),
        }
    }
}

/// A decoded frame borrowing the received bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    pub stream: u32,
    pub kind: FrameKind,
    pub flags: Flags,
    pub app_metadata: &'a [u8],
    pub ipc: &'a [u8],
}

impl<'a> Frame<'a> {
    /// Decodes and validates one binary WebSocket message. `max_payload` caps
    /// `app_metadata` plus IPC bytes (the segment size).
    pub fn decode(bytes: &'a [u8], max_payload: usize) -> Result<Self> {
        let Some((header, payload)) = bytes.split_first_chunk::<HEADER_LEN>() else {
            return Err(ProtocolError::ShortFrame {
                expected: HEADER_LEN,
                found: bytes.len(),
            });
        };
        let h = Header::decode(header, payload.len(), max_payload)?;
        let (app_metadata, ipc) = payload.split_at(h.app_metadata_len);
        Ok(Frame {
            stream: h.stream,
            kind: h.kind,
            flags: h.flags,
            app_metadata,
            ipc,
        })
    }

    /// Bytes of payload, the amount charged against the stream's credit.
    pub fn payload_len(&self) -> usize {
        self.app_metadata.len() + self.ipc.len()
    }
}

/// Writes the header of a frame whose payload is `app_metadata_len` bytes of
/// `app_metadata` followed by the IPC bytes. The caller appends both.
pub fn encode_header(
    stream: u32,
    kind: FrameKind,
    flags: Flags,
    app_metadata_len: u32,
) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[0..4].copy_from_slice(&stream.to_le_bytes());
    h[4] = kind as u8;
    h[5] = flags.to_byte();
    h[8..12].copy_from_slice(&app_metadata_len.to_le_bytes());
    h
}

/// Builds a whole frame in one right-sized allocation from payload pieces.
pub fn encode(
    stream: u32,
    kind: FrameKind,
    flags: Flags,
    app_metadata: &[u8],
    ipc: &[&[u8]],
) -> Result<Vec<u8>> {
    let meta_len = u32::try_from(app_metadata.len()).map_err(|_| ProtocolError::FrameTooLarge {
        limit: u32::MAX as usize,
        found: app_metadata.len(),
    })?;
    let len = HEADER_LEN + app_metadata.len() + ipc.iter().map(|p| p.len()).sum::<usize>();
    let mut out = Vec::with_capacity(len);
    out.extend_from_slice(&encode_header(stream, kind, flags, meta_len));
    out.extend_from_slice(app_metadata);
    for piece in ipc {
        out.extend_from_slice(piece);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TestResult;

    const MAX: usize = 1 << 20;

    fn frame(stream: u32, kind: u8, flags: u8, reserved: u16, meta: u32, tail: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&stream.to_le_bytes());
        v.push(kind);
        v.push(flags);
        v.extend_from_slice(&reserved.to_le_bytes());
        v.extend_from_slice(&meta.to_le_bytes());
        v.extend_from_slice(tail);
        v
    }

    #[test]
    fn data_round_trip() -> TestResult {
        let bytes = encode(7, FrameKind::Data, Flags::WHOLE, b"meta", &[b"ab", b"cd"])?;
        assert_eq!(bytes.len(), HEADER_LEN + 8);
        let f = Frame::decode(&bytes, MAX)?;
        assert_eq!(f.stream, 7);
        assert_eq!(f.kind, FrameKind::Data);
        assert_eq!(f.flags, Flags::WHOLE);
        assert_eq!(f.app_metadata, b"meta");
        assert_eq!(f.ipc, b"abcd");
        assert_eq!(f.payload_len(), 8);
        Ok(())
    }

    #[test]
    fn middle_segment_round_trip() -> TestResult {
        let bytes = encode(u32::MAX, FrameKind::Data, Flags::default(), b"", &[b"x"])?;
        let f = Frame::decode(&bytes, MAX)?;
        assert_eq!(
            (f.stream, f.flags, f.ipc),
            (u32::MAX, Flags::default(), &b"x"[..])
        );
        let last = Flags {
            first: false,
            last: true,
        };
        let bytes = encode(3, FrameKind::Data, last, b"", &[b"y"])?;
        assert_eq!(Frame::decode(&bytes, MAX)?.flags, last);
        Ok(())
    }

    #[test]
    fn metadata_round_trip() -> TestResult {
        let bytes = encode(1, FrameKind::Metadata, Flags::WHOLE, b"put-ack", &[])?;
        let f = Frame::decode(&bytes, MAX)?;
        assert_eq!(
            (f.kind, f.app_metadata, f.ipc),
            (FrameKind::Metadata, &b"put-ack"[..], &b""[..])
        );
        // An empty app_metadata is a valid FlightData too.
        let bytes = encode(1, FrameKind::Metadata, Flags::WHOLE, b"", &[])?;
        assert_eq!(Frame::decode(&bytes, MAX)?.payload_len(), 0);
        Ok(())
    }

    fn err(bytes: &[u8]) -> String {
        Frame::decode(bytes, 16).unwrap_err().to_string()
    }

    #[test]
    fn malformed_frames() {
        assert_eq!(err(&[]), "frame needs a 12-byte header, found 0 bytes");
        assert_eq!(
            err(&[1; 11]),
            "frame needs a 12-byte header, found 11 bytes"
        );
        assert_eq!(
            err(&frame(0, 0, 3, 0, 0, b"x")),
            "frame stream id must be non-zero, found 0"
        );
        assert_eq!(
            err(&frame(1, 2, 3, 0, 0, b"x")),
            "frame kind must be 0 (data) or 1 (metadata), found 2"
        );
        assert_eq!(
            err(&frame(1, 0, 4, 0, 0, b"x")),
            "frame flags may only set bits 0 (first) and 1 (last), found 0x04"
        );
        assert_eq!(
            err(&frame(1, 0, 3, 9, 0, b"x")),
            "frame reserved field must be 0, found 9"
        );
        assert_eq!(
            err(&frame(1, 0, 3, 0, 5, b"abc")),
            "frame declares 5 bytes of app_metadata, only 3 follow the header"
        );
        assert_eq!(
            err(&frame(1, 0, 3, 0, u32::MAX, b"abc")),
            "frame declares 4294967295 bytes of app_metadata, only 3 follow the header"
        );
        assert_eq!(
            err(&frame(1, 0, 2, 0, 1, b"ab")),
            "app_metadata may only be sent in the first segment of a message"
        );
        assert_eq!(
            err(&frame(1, 1, 1, 0, 1, b"a")),
            "metadata frame must set both first and last flags and carry no IPC bytes"
        );
        assert_eq!(
            err(&frame(1, 1, 3, 0, 1, b"ab")),
            "metadata frame must set both first and last flags and carry no IPC bytes"
        );
        assert_eq!(
            err(&frame(1, 0, 3, 0, 2, b"ab")),
            "data frame must carry at least one IPC byte"
        );
        assert_eq!(
            err(&frame(1, 0, 3, 0, 0, &[0; 17])),
            "frame payload is 17 bytes, the limit is 16"
        );
    }

    #[test]
    fn every_truncation_of_a_frame_is_an_error_or_a_shorter_frame() -> TestResult {
        let bytes = encode(9, FrameKind::Data, Flags::WHOLE, b"mm", &[b"ipc-bytes"])?;
        for cut in 0..bytes.len() {
            match Frame::decode(&bytes[..cut], MAX) {
                Ok(f) => assert!(f.ipc.len() < 9),
                Err(e) => assert!(!e.to_string().is_empty()),
            }
        }
        Ok(())
    }
}
