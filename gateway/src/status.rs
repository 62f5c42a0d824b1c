//! What a browser sees of a stream's status (see "Status messages" in
//! `docs/protocol.md`). The code and text pass as the upstream sent them, with two
//! changes:
//!
//! - A lost upstream connection is `UNAVAILABLE`, as gRPC has it and as tonic reports a
//!   connection it could not open or whose pings went unanswered. A socket that fails
//!   mid-call (the upstream killed) comes out of tonic as `UNKNOWN` "h2 protocol error".
//! - The message is what a person reads: its first line, before any `. Detail: `, at
//!   most [`MAX_MESSAGE_BYTES`]. Arrow C++ Flight servers (pyarrow among them) append
//!   `. Detail: ` and the error's detail, which for a Python exception is its traceback:
//!   file paths and source lines of the server, which a browser has no use for.

use std::error::Error;

use tonic::{Code, Status};

/// The longest status message sent to a browser, in bytes.
pub(crate) const MAX_MESSAGE_BYTES: usize = 512;

/// Where Arrow C++ Flight servers append an error's detail to its message.
const ARROW_DETAIL: &str = ". Detail: ";

/// Marks a message that was shortened.
const CUT: &str = "...";

/// The code and message `status` is sent to the browser with.
pub(crate) fn for_browser(status: &Status) -> (Code, String) {
    if status.code() != Code::Unavailable {
        if let Some(cause) = lost_connection(status) {
            let message = format!("upstream connection lost: {cause}");
            return (Code::Unavailable, summary(&message));
        }
    }
    (status.code(), summary(status.message()))
}

/// The error that says the connection under `status`'s call is gone, if one does: a
/// socket error, which h2 keeps inside its own error rather than as its source.
fn lost_connection(status: &Status) -> Option<&(dyn Error + 'static)> {
    let mut source = status.source();
    while let Some(error) = source {
        let lost = match error.downcast_ref::<h2::Error>() {
            Some(e) => e.is_io(),
            None => error.is::<std::io::Error>(),
        };
        if lost {
            return Some(error);
        }
        source = error.source();
    }
    None
}

/// The first line of `message`, before any Arrow detail, cut to `MAX_MESSAGE_BYTES`
/// on a character boundary; a message that lost text ends with `...`.
fn summary(message: &str) -> String {
    let line_end = message.find(['\n', '\r']).unwrap_or(message.len());
    let mut text = &message[..line_end];
    if let Some(detail) = text.find(ARROW_DETAIL) {
        text = &text[..detail];
    }
    let text = text.trim_end();
    if text.len() == message.trim_end().len() && text.len() <= MAX_MESSAGE_BYTES {
        return text.to_string();
    }
    let mut end = text.len().min(MAX_MESSAGE_BYTES - CUT.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{CUT}", &text[..end])
}

#[cfg(test)]
mod tests {
    use std::io;

    use super::*;

    #[test]
    fn messages_keep_their_first_line_before_any_detail() {
        assert_eq!(summary("no table named t"), "no table named t");
        assert_eq!(summary("no table named t\n"), "no table named t");
        let python = "no table named t. Detail: Traceback (most recent call last):\n  \
                      File \"server.py\", line 9, in do_get\nValueError: no table named t";
        assert_eq!(summary(python), "no table named t...");
        assert_eq!(summary("first\r\nsecond"), "first...");
    }

    #[test]
    fn long_messages_are_cut_on_a_character_boundary() {
        let fits = "x".repeat(MAX_MESSAGE_BYTES);
        assert_eq!(summary(&fits), fits);
        let cut = summary(&"é".repeat(MAX_MESSAGE_BYTES));
        assert_eq!(
            cut,
            format!("{}...", "é".repeat((MAX_MESSAGE_BYTES - 3) / 2))
        );
        assert!(cut.len() <= MAX_MESSAGE_BYTES);
    }

    #[test]
    fn a_lost_connection_is_unavailable() {
        let reset = io::Error::new(io::ErrorKind::ConnectionReset, "connection reset by peer");
        let status = Status::from_error(Box::new(reset));
        assert_eq!(status.code(), Code::Unknown, "tonic's code");
        assert_eq!(
            for_browser(&status),
            (
                Code::Unavailable,
                "upstream connection lost: connection reset by peer".to_string()
            )
        );
        // A status the upstream sent keeps its code.
        let sent = Status::internal("boom");
        assert_eq!(for_browser(&sent), (Code::Internal, "boom".to_string()));
    }
}
