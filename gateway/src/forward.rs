//! `--forward-header`: which headers of a browser's WebSocket upgrade request travel as
//! gRPC metadata on that connection's upstream calls. Only the names listed do; every
//! other header (cookies among them) never leaves the gateway.
//!
//! A browser's WebSocket API cannot set headers of its own, so a forwarded header is
//! usually one a reverse proxy in front of the gateway added (the user it signed in, for
//! example), or a cookie the browser sends by itself.

use axum::http::{HeaderMap, HeaderName};

/// Headers that belong to a hop, to HTTP/2 or to gRPC: h2 refuses to send the first
/// kind, and tonic sets or drops the others, so forwarding them would break or silently
/// do nothing.
const RESERVED: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
    "host",
    "te",
    "content-type",
    "content-length",
    "user-agent",
];

/// Checks a `--forward-header` name; names are matched case-insensitively.
pub(crate) fn check_name(name: &str) -> Result<HeaderName, String> {
    let header = HeaderName::try_from(name)
        .map_err(|_| format!("--forward-header must be an HTTP header name, found {name:?}"))?;
    let lower = header.as_str();
    if RESERVED.contains(&lower)
        || lower.starts_with("grpc-")
        || lower.starts_with("sec-websocket-")
    {
        return Err(format!(
            "--forward-header {name}: the header belongs to HTTP/2, gRPC or the WebSocket \
             upgrade and cannot be forwarded"
        ));
    }
    Ok(header)
}

/// The headers of `request` named in `names`, every value of each.
pub(crate) fn select(request: &HeaderMap, names: &[HeaderName]) -> HeaderMap {
    let mut forwarded = HeaderMap::new();
    for name in names {
        for value in request.get_all(name) {
            forwarded.append(name.clone(), value.clone());
        }
    }
    forwarded
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    #[test]
    fn only_listed_headers_are_selected_with_every_value() {
        let mut request = HeaderMap::new();
        request.insert("x-user", HeaderValue::from_static("alice"));
        request.append("x-group", HeaderValue::from_static("a"));
        request.append("x-group", HeaderValue::from_static("b"));
        request.insert("cookie", HeaderValue::from_static("session=1"));
        let names = [
            check_name("X-User").unwrap(),
            check_name("x-group").unwrap(),
        ];
        let forwarded = select(&request, &names);
        assert_eq!(forwarded.len(), 3);
        assert_eq!(forwarded["x-user"], "alice");
        let groups: Vec<_> = forwarded.get_all("x-group").iter().collect();
        assert_eq!(groups, ["a", "b"]);
        assert!(forwarded.get("cookie").is_none());
    }

    #[test]
    fn reserved_and_malformed_names_are_refused() {
        assert_eq!(
            check_name("Connection").unwrap_err(),
            "--forward-header Connection: the header belongs to HTTP/2, gRPC or the \
             WebSocket upgrade and cannot be forwarded"
        );
        assert!(check_name("grpc-timeout").is_err());
        assert!(check_name("sec-websocket-key").is_err());
        assert!(check_name("te").is_err());
        assert_eq!(
            check_name("x user").unwrap_err(),
            "--forward-header must be an HTTP header name, found \"x user\""
        );
        assert!(check_name("").is_err());
    }
}
