//! What a browser sees of a stream's status (see "Status messages" in
//! `docs/protocol.md`). The code and text pass as the upstream sent them, with these
//! changes:
//!
//! - A lost upstream connection is `UNAVAILABLE`, naming the location, as gRPC has it and
//!   as tonic reports a connection it could not open or whose pings went unanswered. A
//!   socket that fails mid-call (the upstream killed) comes out of tonic as `UNKNOWN`
//!   "h2 protocol error".
//! - A TLS handshake that failed is `UNAVAILABLE`, naming the location and rustls's
//!   reason (an unknown issuer, a name mismatch, an expired certificate); tonic's own
//!   message leaves the location out.
//! - A connection that closed before the server answered is `UNAVAILABLE` naming the
//!   location, not tonic's `CANCELLED` "operation was canceled". A TLS 1.3 server that
//!   requires a client certificate does this to a client without one (or the call sees
//!   a lost connection): its alert comes after the client's handshake is done, and
//!   hyper reports only the closed connection. Both messages of a `grpc+tls` location
//!   end with a hint at `--upstream-cert`.
//! - The message is what a person reads: its first line, before any `. Detail: `, at
//!   most [`MAX_MESSAGE_BYTES`]. Arrow C++ Flight servers (pyarrow among them) append
//!   `. Detail: ` and the error's detail, which for a Python exception is its traceback:
//!   file paths and source lines of the server, which a browser has no use for.

use std::error::Error;
use std::io;

use tokio_rustls::rustls;
use tonic::{Code, Status};

/// The longest status message sent to a browser, in bytes.
pub(crate) const MAX_MESSAGE_BYTES: usize = 512;

/// Where Arrow C++ Flight servers append an error's detail to its message.
const ARROW_DETAIL: &str = ". Detail: ";

/// Ends the message of a `grpc+tls` connection that closed or was lost.
const CLIENT_CERTIFICATE_HINT: &str =
    " (a server that requires a client certificate closes it so: see --upstream-cert)";

/// Marks a message that was shortened.
const CUT: &str = "...";

/// The code and message `status` is sent to the browser with.
pub(crate) fn for_browser(status: &Status) -> (Code, String) {
    (status.code(), summary(status.message()))
}

/// The status of a call to `location` that ended with `status`: an `UNAVAILABLE` one
/// naming the location if the connection failed under it (a TLS handshake, a connection
/// closed before an answer or lost), else `status`.
pub(crate) fn naming_location(status: Status, location: &str) -> Status {
    if let Some(e) = tls_error(&status) {
        return Status::unavailable(format!("TLS with {location} failed: {e}"));
    }
    // A TLS 1.3 server refuses a missing client certificate after the client's side of
    // the handshake is done, so the gateway sees only a closed connection: which of the
    // two below depends on a race.
    let hint = match location.starts_with("grpc+tls://") {
        true => CLIENT_CERTIFICATE_HINT,
        false => "",
    };
    if closed_before_answer(&status) {
        return Status::unavailable(format!(
            "{location} closed the connection before answering{hint}"
        ));
    }
    if status.code() != Code::Unavailable {
        if let Some(cause) = lost_connection(&status) {
            return Status::unavailable(format!(
                "upstream connection to {location} lost: {cause}{hint}"
            ));
        }
    }
    status
}

/// hyper cancels a request whose connection closed before its answer came.
fn closed_before_answer(status: &Status) -> bool {
    let mut source = status.source();
    while let Some(error) = source {
        if error
            .downcast_ref::<hyper::Error>()
            .is_some_and(|e| e.is_canceled())
        {
            return true;
        }
        source = error.source();
    }
    false
}

/// The rustls error under `status`, if any: rustls's errors reach tonic inside an
/// `io::Error`, whose `source()` skips the error it wraps.
fn tls_error(status: &Status) -> Option<&rustls::Error> {
    let mut source = status.source();
    while let Some(error) = source {
        let inner = error
            .downcast_ref::<io::Error>()
            .and_then(|e| e.get_ref())
            .map(|e| e as &(dyn Error + 'static));
        if let Some(tls) = inner.unwrap_or(error).downcast_ref::<rustls::Error>() {
            return Some(tls);
        }
        source = error.source();
    }
    None
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
    fn a_tls_failure_names_the_location() {
        let bad = rustls::Error::InvalidCertificate(rustls::CertificateError::Expired);
        let status = Status::from_error(Box::new(io::Error::new(io::ErrorKind::InvalidData, bad)));
        let named = naming_location(status, "grpc+tls://h:1");
        assert_eq!(named.code(), Code::Unavailable);
        assert_eq!(
            named.message(),
            "TLS with grpc+tls://h:1 failed: invalid peer certificate: Expired"
        );
        let other = naming_location(Status::internal("boom"), "grpc+tls://h:1");
        assert_eq!((other.code(), other.message()), (Code::Internal, "boom"));
    }

    #[test]
    fn a_lost_connection_is_unavailable() {
        let reset = io::Error::new(io::ErrorKind::ConnectionReset, "connection reset by peer");
        let status = Status::from_error(Box::new(reset));
        assert_eq!(status.code(), Code::Unknown, "tonic's code");
        let lost = naming_location(status, "grpc://h:1");
        assert_eq!(
            for_browser(&lost),
            (
                Code::Unavailable,
                "upstream connection to grpc://h:1 lost: connection reset by peer".to_string()
            )
        );
        // A status the upstream sent keeps its code.
        let sent = naming_location(Status::internal("boom"), "grpc://h:1");
        assert_eq!(for_browser(&sent), (Code::Internal, "boom".to_string()));
    }
}
