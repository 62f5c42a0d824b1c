//! Splits an IPC stream into messages as bytes arrive, and owns the memory each part is
//! copied into: the prefix, the flatbuffer metadata, and the body, allocated once at its
//! exact size and aligned for arrow-rs.
//!
//! This replaces `arrow_ipc::reader::StreamDecoder`'s buffering. That decoder takes bytes
//! already in wasm memory and joins a message that spans two pushes into a growing buffer,
//! which is a second copy of every spanning byte. Here the caller copies each segment
//! straight into [`Framer::destination`], so each byte is copied once.

use std::mem::MaybeUninit;

use arrow_buffer::{Buffer, MutableBuffer};

use crate::ipc::error::{QuiverError, Result};
use crate::ipc::limits::ReadLimits;

const CONTINUATION: [u8; 4] = [0xFF; 4];

/// The metadata buffer's capacity kept from one message to the next, at most.
const KEPT_METADATA_BYTES: usize = 64 << 10;

/// One complete message: its flatbuffer metadata (verified) and its body.
pub(crate) struct RawMessage<'a> {
    pub metadata: &'a [u8],
    pub body: Buffer,
}

enum Stage {
    /// Reading the 4-byte legacy length or the 8-byte continuation + length prefix.
    Prefix {
        need: usize,
    },
    Metadata {
        len: usize,
    },
    Body {
        buffer: MutableBuffer,
        len: usize,
    },
    /// The end-of-stream marker was read.
    Ended,
}

pub(crate) struct Framer {
    limits: ReadLimits,
    stage: Stage,
    prefix: [u8; 8],
    /// Bytes of the current part written so far.
    filled: usize,
    /// Reused across messages: metadata is small and parsed in place.
    metadata: Vec<u8>,
}

impl Framer {
    pub fn new(limits: ReadLimits) -> Self {
        Framer {
            limits,
            stage: Stage::Prefix { need: 4 },
            prefix: [0; 8],
            filled: 0,
            metadata: Vec::new(),
        }
    }

    pub fn is_ended(&self) -> bool {
        matches!(self.stage, Stage::Ended)
    }

    /// The memory the next bytes of the stream belong in. Empty only after the
    /// end-of-stream marker.
    pub fn destination(&mut self) -> &mut [MaybeUninit<u8>] {
        let filled = self.filled;
        match &mut self.stage {
            Stage::Prefix { need } => as_uninit(&mut self.prefix[filled..*need]),
            Stage::Metadata { len } => &mut self.metadata.spare_capacity_mut()[filled..*len],
            Stage::Body { buffer, len } => {
                // SAFETY: the buffer was allocated with capacity >= len; bytes from `filled`
                // to `len` are inside that allocation and not yet initialized.
                unsafe {
                    let start = buffer.as_mut_ptr().add(filled).cast::<MaybeUninit<u8>>();
                    std::slice::from_raw_parts_mut(start, *len - filled)
                }
            }
            Stage::Ended => &mut [],
        }
    }

    /// Records that the first `n` bytes of [`Framer::destination`] were written. Returns a
    /// message when its last byte arrives.
    ///
    /// # Safety
    /// Those `n` bytes must have been initialized, and `n` must not exceed the
    /// destination's length.
    pub unsafe fn advance(&mut self, n: usize) -> Result<Option<RawMessage<'_>>> {
        self.filled += n;
        let complete = match &self.stage {
            Stage::Prefix { need } => self.filled == *need,
            Stage::Metadata { len } | Stage::Body { len, .. } => self.filled == *len,
            Stage::Ended => false,
        };
        if !complete {
            return Ok(None);
        }
        match std::mem::replace(&mut self.stage, Stage::Prefix { need: 4 }) {
            Stage::Prefix { .. } => self.end_prefix(),
            Stage::Metadata { len } => {
                // SAFETY: all `len` bytes of spare capacity were written.
                unsafe { self.metadata.set_len(len) };
                self.end_metadata()
            }
            Stage::Body { mut buffer, len } => {
                // SAFETY: all `len` bytes were written through `destination`.
                unsafe { buffer.set_len(len) };
                self.filled = 0;
                Ok(Some(self.message(buffer.into())))
            }
            Stage::Ended => {
                self.stage = Stage::Ended;
                Ok(None)
            }
        }
    }

    /// Bytes allocated for messages: the metadata buffer (kept between messages) and the
    /// body still arriving, both allocated at their declared sizes before their bytes
    /// arrive.
    pub fn reserved_bytes(&self) -> usize {
        let body = match &self.stage {
            Stage::Body { len, .. } => *len,
            _ => 0,
        };
        self.metadata.capacity() + body
    }

    /// What the stream still owes if it ends now, or `None` at a message boundary.
    pub fn incomplete(&self) -> Option<(&'static str, usize, usize)> {
        match &self.stage {
            Stage::Prefix { .. } if self.filled == 0 => None,
            Stage::Prefix { need } => Some(("message length prefix", *need, self.filled)),
            Stage::Metadata { len } => Some(("message metadata", *len, self.filled)),
            Stage::Body { len, .. } => Some(("message body", *len, self.filled)),
            Stage::Ended => None,
        }
    }

    fn end_prefix(&mut self) -> Result<Option<RawMessage<'_>>> {
        if self.filled == 4 && self.prefix[..4] == CONTINUATION {
            self.stage = Stage::Prefix { need: 8 };
            return Ok(None);
        }
        // A file's magic, ARROW1, would pass for a huge legacy length below.
        if self.filled == 4 && self.prefix[..4] == *b"ARRO" {
            return Err(QuiverError::invalid(
                "expected a message, found the magic ARROW1 of an IPC file: read files with \
                 tableFromIPC, tableFromIPCAsync or openFile",
            ));
        }
        // Before format 0.15 the prefix was the length alone, with no continuation marker.
        let at = self.filled - 4;
        let len = i32::from_le_bytes([
            self.prefix[at],
            self.prefix[at + 1],
            self.prefix[at + 2],
            self.prefix[at + 3],
        ]);
        self.filled = 0;
        if len == 0 {
            self.stage = Stage::Ended;
            return Ok(None);
        }
        let len = usize::try_from(len).map_err(|_| {
            QuiverError::invalid(format!(
                "expected a non-negative metadata length, found {len}"
            ))
        })?;
        self.limits
            .check_message_size("message metadata", len as u64)?;
        self.metadata.clear();
        // Metadata is small; a buffer grown for an outsized one is not kept for the rest.
        if self.metadata.capacity() > len.max(KEPT_METADATA_BYTES) {
            self.metadata = Vec::new();
        }
        self.metadata.try_reserve_exact(len).map_err(|_| {
            QuiverError::invalid(format!("cannot allocate {len} bytes of metadata"))
        })?;
        self.stage = Stage::Metadata { len };
        Ok(None)
    }

    fn end_metadata(&mut self) -> Result<Option<RawMessage<'_>>> {
        let message = arrow_ipc::root_as_message(&self.metadata).map_err(|e| {
            QuiverError::invalid(format!(
                "message metadata is not a valid flatbuffer: {}",
                one_line(&e.to_string())
            ))
        })?;
        let declared = message.bodyLength();
        let body_len = u64::try_from(declared).map_err(|_| {
            QuiverError::invalid(format!(
                "expected a non-negative body length, found {declared}"
            ))
        })?;
        self.limits
            .check_message_size("message", self.metadata.len() as u64 + body_len)?;
        // check_message_size bounds body_len by a limit that fits in usize on every target.
        let len = body_len as usize;
        self.filled = 0;
        if len == 0 {
            return Ok(Some(self.message(Buffer::from(MutableBuffer::new(0)))));
        }
        let buffer = MutableBuffer::try_with_capacity(len).map_err(|e| {
            QuiverError::invalid(format!("cannot allocate a {len}-byte message body: {e}"))
        })?;
        self.stage = Stage::Body { buffer, len };
        Ok(None)
    }

    fn message(&self, body: Buffer) -> RawMessage<'_> {
        RawMessage {
            metadata: &self.metadata,
            body,
        }
    }
}

fn as_uninit(bytes: &mut [u8]) -> &mut [MaybeUninit<u8>] {
    // SAFETY: MaybeUninit<u8> has the layout of u8, and the callers only write
    // initialized bytes through it.
    unsafe { &mut *(bytes as *mut [u8] as *mut [MaybeUninit<u8>]) }
}

/// The flatbuffer verifier's text, which spans lines, on one line: a JS Error message
/// reads better that way.
pub(super) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
