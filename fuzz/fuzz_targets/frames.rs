//! The WebSocket side of the Flight protocol, as the gateway meets a client: a sequence
//! of WebSocket messages, each a binary frame (decoded, then its IPC bytes cut back into
//! messages the way a DoPut upload is) or a JSON control message. Each message is led by
//! a 2-byte length, so the fuzzer picks where messages and frames begin and end.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quiver::flight::control::ClientMessage;
use quiver::flight::frame::{Frame, FrameKind};
use quiver::flight::message::Splitter;

/// Small limits, so that the fuzzer reaches "too large" paths with small inputs.
const MAX_PAYLOAD: usize = 1 << 12;
const MAX_MESSAGE: usize = 1 << 14;

fuzz_target!(|data: &[u8]| {
    let mut splitter = Splitter::new(MAX_MESSAGE);
    let mut messages = Vec::new();
    let mut rest = data;
    while let Some((len, tail)) = rest.split_first_chunk::<2>() {
        let len = usize::from(u16::from_le_bytes(*len));
        // The top bit says text: the length is then of a control message.
        let text = len & 0x8000 != 0;
        let (message, tail) = tail.split_at((len & 0x7fff).min(tail.len()));
        rest = tail;
        if text {
            if let Ok(json) = std::str::from_utf8(message) {
                let _ = ClientMessage::from_json(json);
            }
            continue;
        }
        let Ok(frame) = Frame::decode(message, MAX_PAYLOAD) else {
            return;
        };
        assert!(frame.payload_len() <= MAX_PAYLOAD);
        // The checks doput.rs makes on one upload, in its order.
        let ok = match frame.kind {
            FrameKind::Metadata => splitter.check_first(true).is_ok(),
            FrameKind::Data => {
                splitter.check_first(frame.flags.first).is_ok()
                    && splitter.push(frame.ipc, &mut messages).is_ok()
                    && splitter.check_last(frame.flags.last).is_ok()
            }
        };
        for m in messages.drain(..) {
            assert!(m.header.len() + m.body.len() <= MAX_MESSAGE);
        }
        if !ok {
            return;
        }
    }
    let _ = splitter.finish();
});
