//! The IPC framing of Flight messages.
//!
//! `FlightData` carries a message's flatbuffer header and its body separately. To make
//! the frames of a stream concatenate into a valid IPC stream, the gateway writes the
//! encapsulation prefix itself ([`prefix`]) and then the header, padding and body as
//! they came. For uploads, [`Splitter`] cuts the client's IPC stream back into
//! header/body pairs.

use super::{ProtocolError, Result};

/// The continuation marker that opens every encapsulated IPC message.
pub const CONTINUATION: u32 = 0xFFFF_FFFF;

/// The 8-byte end-of-stream marker.
pub const EOS: [u8; 8] = [0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0];

/// The encapsulation of one message: the 8-byte prefix, then how many zero bytes must
/// follow the `header_len` bytes of flatbuffer so that the body starts on a multiple of 8.
pub fn prefix(header_len: usize) -> Result<([u8; 8], usize)> {
    let padded = header_len.div_ceil(8) * 8;
    let len = i32::try_from(padded).map_err(|_| ProtocolError::MessageTooLarge {
        limit: i32::MAX as usize,
        found: padded as u64,
    })?;
    let mut p = [0u8; 8];
    p[..4].copy_from_slice(&CONTINUATION.to_le_bytes());
    p[4..].copy_from_slice(&len.to_le_bytes());
    Ok((p, padded - header_len))
}

/// The body length a flatbuffer `Message` declares.
pub fn body_length(header: &[u8]) -> Result<u64> {
    let message =
        arrow_ipc::root_as_message(header).map_err(|e| ProtocolError::BadMessage(e.to_string()))?;
    let len = message.bodyLength();
    u64::try_from(len).map_err(|_| ProtocolError::BadBodyLength(len))
}

/// Where the last buffer of a message's body ends, by its header: bytes past it are
/// padding. 0 for a message without buffers (a schema).
pub fn buffers_end(header: &[u8]) -> Result<u64> {
    let message =
        arrow_ipc::root_as_message(header).map_err(|e| ProtocolError::BadMessage(e.to_string()))?;
    let batch = message
        .header_as_record_batch()
        .or_else(|| message.header_as_dictionary_batch().and_then(|d| d.data()));
    let buffers = batch.and_then(|b| b.buffers()).into_iter().flatten();
    buffers.enumerate().try_fold(0, |end, (i, b)| {
        let buffer_end = b
            .offset()
            .checked_add(b.length())
            .filter(|_| b.offset() >= 0);
        match buffer_end.and_then(|e| u64::try_from(e).ok()) {
            Some(e) => Ok(end.max(e)),
            None => Err(ProtocolError::BadMessage(format!(
                "buffer {i} has offset {} and length {}",
                b.offset(),
                b.length()
            ))),
        }
    })
}

/// One message cut from an IPC stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The flatbuffer `Message`, with its padding (FlightData `data_header`).
    pub header: Vec<u8>,
    /// The body (FlightData `data_body`).
    pub body: Vec<u8>,
}

#[derive(Debug)]
enum State {
    /// Collecting the 8-byte prefix; `buf` holds what has arrived.
    Prefix,
    /// Collecting `len` bytes of flatbuffer metadata.
    Header { len: usize },
    /// Collecting `len` bytes of body after `header`.
    Body { header: Vec<u8>, len: usize },
}

/// Cuts an IPC stream, pushed in pieces split anywhere, into messages. Each byte is
/// copied once, into the message that owns it. The end-of-stream marker is accepted and
/// produces nothing.
#[derive(Debug)]
pub struct Splitter {
    state: State,
    buf: Vec<u8>,
    max_message: usize,
}

impl Splitter {
    /// `max_message` caps one message's metadata plus body.
    pub fn new(max_message: usize) -> Self {
        Splitter {
            state: State::Prefix,
            buf: Vec::new(),
            max_message,
        }
    }

    /// Bytes allocated for the message in progress: its header and body as declared,
    /// however much of them has arrived.
    pub fn allocated(&self) -> usize {
        let header = match &self.state {
            State::Body { header, .. } => header.capacity(),
            _ => 0,
        };
        header + self.buf.capacity()
    }

    /// Bytes still needed to finish the current message (0 at a message boundary).
    pub fn pending(&self) -> u64 {
        match &self.state {
            State::Prefix if self.buf.is_empty() => 0,
            State::Prefix => (8 - self.buf.len()) as u64,
            State::Header { len } => (len - self.buf.len()) as u64,
            State::Body { len, .. } => (len - self.buf.len()) as u64,
        }
    }

    /// Checks that a segment flagged `first` starts a message and one flagged `last`
    /// (after [`Splitter::push`]) ends one.
    pub fn check_first(&self, first: bool) -> Result<()> {
        match (first, self.pending()) {
            (true, 0) => Ok(()),
            (true, n) => Err(ProtocolError::FirstMidMessage(n)),
            (false, 0) => Err(ProtocolError::ContinuationWithoutFirst),
            (false, _) => Ok(()),
        }
    }

    /// See [`Splitter::check_first`].
    pub fn check_last(&self, last: bool) -> Result<()> {
        match (last, self.pending()) {
            (true, n) if n > 0 => Err(ProtocolError::LastMidMessage(n)),
            _ => Ok(()),
        }
    }

    /// Checks that the stream did not end inside a message.
    pub fn finish(&self) -> Result<()> {
        match self.pending() {
            0 => Ok(()),
            n => Err(ProtocolError::Truncated(n)),
        }
    }

    /// Consumes `bytes`, appending each completed message to `out`.
    pub fn push(&mut self, mut bytes: &[u8], out: &mut Vec<Message>) -> Result<()> {
        while !bytes.is_empty() {
            let want = match &self.state {
                State::Prefix => 8,
                State::Header { len } => *len,
                State::Body { len, .. } => *len,
            };
            let take = (want - self.buf.len()).min(bytes.len());
            let (head, rest) = bytes.split_at(take);
            self.buf.extend_from_slice(head);
            bytes = rest;
            if self.buf.len() == want {
                self.advance(out)?;
            }
        }
        Ok(())
    }

    /// Moves to the next state once the current one has all its bytes.
    fn advance(&mut self, out: &mut Vec<Message>) -> Result<()> {
        let buf = std::mem::take(&mut self.buf);
        match std::mem::replace(&mut self.state, State::Prefix) {
            State::Prefix => {
                // `push` fills exactly 8 bytes before calling here.
                let [c0, c1, c2, c3, l0, l1, l2, l3] =
                    <[u8; 8]>::try_from(buf.as_slice()).unwrap_or_default();
                let marker = u32::from_le_bytes([c0, c1, c2, c3]);
                if marker != CONTINUATION {
                    return Err(ProtocolError::NoContinuation(marker));
                }
                let len = i32::from_le_bytes([l0, l1, l2, l3]);
                if len < 0 || len % 8 != 0 {
                    return Err(ProtocolError::BadMetadataLength(len));
                }
                let len = len as usize;
                if len > self.max_message {
                    return Err(ProtocolError::MessageTooLarge {
                        limit: self.max_message,
                        found: len as u64,
                    });
                }
                if len > 0 {
                    self.buf = Vec::with_capacity(len);
                    self.state = State::Header { len };
                }
            }
            State::Header { len } => {
                let body = body_length(&buf)?;
                let total = body.saturating_add(len as u64);
                if total > self.max_message as u64 {
                    return Err(ProtocolError::MessageTooLarge {
                        limit: self.max_message,
                        found: total,
                    });
                }
                // Bounded by max_message above, so it fits in usize.
                let body = body as usize;
                if body == 0 {
                    out.push(Message {
                        header: buf,
                        body: Vec::new(),
                    });
                } else {
                    self.buf = Vec::with_capacity(body);
                    self.state = State::Body {
                        header: buf,
                        len: body,
                    };
                }
            }
            State::Body { header, .. } => out.push(Message { header, body: buf }),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TestResult;
    use arrow_array::{Int32Array, RecordBatch, StringArray};
    use arrow_ipc::writer::StreamWriter;
    use arrow_schema::{DataType, Field, Schema};
    use std::sync::Arc;

    fn stream_bytes() -> TestResult<Vec<u8>> {
        let schema = Arc::new(Schema::new(vec![
            Field::new("a", DataType::Int32, false),
            Field::new("b", DataType::Utf8, true),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int32Array::from(vec![1, 2, 3])),
                Arc::new(StringArray::from(vec![Some("x"), None, Some("zz")])),
            ],
        )?;
        let mut w = StreamWriter::try_new(Vec::new(), &schema)?;
        w.write(&batch)?;
        w.write(&batch)?;
        w.finish()?;
        Ok(w.into_inner()?)
    }

    /// Re-encapsulates split messages the way the gateway does for DoGet.
    fn reassemble(messages: &[Message]) -> TestResult<Vec<u8>> {
        let mut out = Vec::new();
        for m in messages {
            let (p, pad) = prefix(m.header.len())?;
            out.extend_from_slice(&p);
            out.extend_from_slice(&m.header);
            out.resize(out.len() + pad, 0);
            out.extend_from_slice(&m.body);
        }
        out.extend_from_slice(&EOS);
        Ok(out)
    }

    #[test]
    fn split_at_every_point_round_trips() -> TestResult {
        let bytes = stream_bytes()?;
        for cut in 0..=bytes.len() {
            let mut s = Splitter::new(1 << 20);
            let mut out = Vec::new();
            s.push(&bytes[..cut], &mut out)?;
            s.push(&bytes[cut..], &mut out)?;
            s.finish()?;
            assert_eq!(out.len(), 3, "schema and two batches");
            assert_eq!(reassemble(&out)?, bytes, "cut at {cut}");
        }
        Ok(())
    }

    #[test]
    fn allocated_counts_the_declared_message() -> TestResult {
        let bytes = stream_bytes()?;
        let mut whole = Vec::new();
        Splitter::new(1 << 20).push(&bytes, &mut whole)?;
        let batch = &whole[1];
        // Into the first batch: its prefix, header and one body byte.
        let start = 8 + whole[0].header.len();
        let into = start + 8 + batch.header.len() + 1;
        let mut s = Splitter::new(1 << 20);
        s.push(&bytes[..into], &mut Vec::new())?;
        assert_eq!(s.allocated(), batch.header.len() + batch.body.len());
        s.push(
            &bytes[into..start + 8 + batch.header.len() + batch.body.len()],
            &mut Vec::new(),
        )?;
        assert_eq!((s.pending(), s.allocated()), (0, 0), "at a boundary");
        Ok(())
    }

    #[test]
    fn byte_by_byte_reports_boundaries() -> TestResult {
        let bytes = stream_bytes()?;
        let mut s = Splitter::new(1 << 20);
        let mut out = Vec::new();
        let mut boundaries = 0;
        for b in &bytes {
            s.push(std::slice::from_ref(b), &mut out)?;
            if s.pending() == 0 {
                boundaries += 1;
            }
        }
        assert_eq!(out.len(), 3);
        assert_eq!(boundaries, 4, "three messages and the EOS");
        assert_eq!(body_length(&out[1].header)?, out[1].body.len() as u64);
        Ok(())
    }

    #[test]
    fn prefix_pads_to_eight() -> TestResult {
        assert_eq!(prefix(0)?, ([0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0], 0));
        assert_eq!(prefix(13)?, ([0xFF, 0xFF, 0xFF, 0xFF, 16, 0, 0, 0], 3));
        assert_eq!(prefix(16)?.1, 0);
        assert_eq!(
            prefix(i32::MAX as usize).unwrap_err().to_string(),
            "IPC message needs 2147483648 bytes, the limit is 2147483647"
        );
        Ok(())
    }

    #[test]
    fn flags_checks() -> TestResult {
        let bytes = stream_bytes()?;
        let mut s = Splitter::new(1 << 20);
        s.check_first(true)?;
        assert_eq!(
            s.check_first(false).unwrap_err().to_string(),
            "a segment without the first flag must continue a message, but none is open"
        );
        s.push(&bytes[..5], &mut Vec::new())?;
        assert_eq!(
            s.check_first(true).unwrap_err().to_string(),
            "a first segment must start a new IPC message, but 3 bytes of the previous one are missing"
        );
        assert_eq!(
            s.check_last(true).unwrap_err().to_string(),
            "a last segment must end its IPC message, but 3 more bytes are needed"
        );
        assert_eq!(
            s.finish().unwrap_err().to_string(),
            "IPC stream ended inside a message: 3 more bytes were needed"
        );
        s.check_first(false)?;
        s.check_last(false)?;
        Ok(())
    }

    fn split_err(bytes: &[u8], max: usize) -> String {
        Splitter::new(max)
            .push(bytes, &mut Vec::new())
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn malformed_streams() -> TestResult {
        assert_eq!(
            split_err(&[0x10, 0, 0, 0, 0, 0, 0, 0], 64),
            "IPC message must start with continuation marker 0xFFFFFFFF, found 0x00000010"
        );
        assert_eq!(
            split_err(&[0xFF, 0xFF, 0xFF, 0xFF, 0xF8, 0xFF, 0xFF, 0xFF], 64),
            "IPC metadata length must be a non-negative multiple of 8, found -8"
        );
        assert_eq!(
            split_err(&[0xFF, 0xFF, 0xFF, 0xFF, 12, 0, 0, 0], 64),
            "IPC metadata length must be a non-negative multiple of 8, found 12"
        );
        assert_eq!(
            split_err(&[0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0x40], 64),
            "IPC message needs 1073741824 bytes, the limit is 64"
        );
        let mut garbage = vec![0xFF, 0xFF, 0xFF, 0xFF, 16, 0, 0, 0];
        garbage.extend_from_slice(&[0xAB; 16]);
        assert!(split_err(&garbage, 64)
            .starts_with("IPC message metadata is not a valid flatbuffer Message"));
        // A valid header whose body exceeds the limit is refused before allocating it.
        let bytes = stream_bytes()?;
        let mut out = Vec::new();
        let mut s = Splitter::new(1 << 20);
        s.push(&bytes, &mut out)?;
        let mut big = Vec::new();
        let (p, pad) = prefix(out[1].header.len())?;
        big.extend_from_slice(&p);
        big.extend_from_slice(&out[1].header);
        big.resize(big.len() + pad, 0);
        let limit = big.len() - 8;
        assert!(split_err(&big, limit).starts_with("IPC message needs "));
        Ok(())
    }

    #[test]
    fn arbitrary_bytes_never_panic() -> TestResult {
        // A cheap deterministic fuzz pass; cargo-fuzz covers this in depth.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let bytes = stream_bytes()?;
        for round in 0..2000 {
            let mut input = bytes.clone();
            for _ in 0..(round % 7 + 1) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let i = (x as usize) % input.len();
                input[i] = (x >> 32) as u8;
            }
            let mut s = Splitter::new(1 << 16);
            let _ = s.push(&input, &mut Vec::new());
        }
        Ok(())
    }
}
