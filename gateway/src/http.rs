//! The HTTP side: the WebSocket endpoint at `/flight` (Origin check, subprotocol) and,
//! with `--static DIR`, the static files of `static_files`.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{ConnectInfo, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use quiver::flight::{frame::HEADER_LEN, SUBPROTOCOL};

use crate::config::Config;
use crate::conn;
use crate::forward;
use crate::shared::Shared;
use crate::static_files;

pub(crate) fn router(config: Config) -> io::Result<Router> {
    let static_dir = config.static_dir.clone();
    let shared = Arc::new(Shared::new(config)?);
    let mut router = Router::new()
        .route("/flight", get(upgrade))
        .with_state(shared);
    if let Some(dir) = static_dir {
        router = static_files::routes(router, &dir);
    }
    Ok(router)
}

async fn upgrade(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    ws: WebSocketUpgrade,
) -> Response {
    if let Some(origin) = headers.get(header::ORIGIN) {
        if !origin_allowed(
            origin,
            headers.get(header::HOST),
            &shared.config.allow_origins,
        ) {
            let origin = String::from_utf8_lossy(origin.as_bytes()).into_owned();
            return (
                StatusCode::FORBIDDEN,
                format!("Origin {origin} is not allowed"),
            )
                .into_response();
        }
    }
    let offered = ws
        .requested_protocols()
        .any(|p| p.as_bytes() == SUBPROTOCOL.as_bytes());
    if !offered {
        return (
            StatusCode::BAD_REQUEST,
            format!("expected WebSocket subprotocol {SUBPROTOCOL}"),
        )
            .into_response();
    }
    // Slack over the largest valid frame, so that an oversize frame gets a protocol error
    // that names the limit rather than a transport error.
    let limit = shared.config.max_segment_bytes + HEADER_LEN + (64 << 10);
    let forwarded = forward::select(&headers, &shared.config.forward_headers);
    ws.protocols([SUBPROTOCOL])
        .max_message_size(limit)
        .on_upgrade(move |socket| conn::run(socket, shared, peer.ip(), forwarded))
}

/// Listed origins and `*` are allowed, and so are same-origin pages when the gateway is
/// addressed by IP or as `localhost`. Under a domain name, same-origin is not enough:
/// with DNS rebinding, a hostile page's own domain can point at the gateway.
fn origin_allowed(origin: &HeaderValue, host: Option<&HeaderValue>, allowed: &[String]) -> bool {
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    let same_origin = host
        .and_then(|h| h.to_str().ok())
        .zip(origin.split_once("://"))
        .is_some_and(|(host, (_, authority))| {
            authority.eq_ignore_ascii_case(host) && not_a_domain(host)
        });
    same_origin
        || allowed
            .iter()
            .any(|a| a == "*" || a.eq_ignore_ascii_case(origin))
}

/// `host[:port]` names an IP address or `localhost`.
fn not_a_domain(host: &str) -> bool {
    let name = match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    };
    let name = name.trim_start_matches('[').trim_end_matches(']');
    name.eq_ignore_ascii_case("localhost") || name.parse::<std::net::IpAddr>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed(origin: &str, host: &str, list: &[&str]) -> bool {
        let list: Vec<String> = list.iter().map(|s| s.to_string()).collect();
        origin_allowed(
            &HeaderValue::from_str(origin).unwrap(),
            Some(&HeaderValue::from_str(host).unwrap()),
            &list,
        )
    }

    #[test]
    fn origins() {
        assert!(allowed("http://127.0.0.1:8080", "127.0.0.1:8080", &[]));
        assert!(allowed("http://localhost:8080", "localhost:8080", &[]));
        assert!(allowed("http://[::1]:8080", "[::1]:8080", &[]));
        // DNS rebinding: a domain that resolves to the gateway is not trusted as such.
        assert!(!allowed(
            "http://rebind.example:8080",
            "rebind.example:8080",
            &[]
        ));
        assert!(allowed(
            "http://gw.example",
            "gw.example",
            &["http://gw.example"]
        ));
        assert!(allowed(
            "http://app.example",
            "gw:1",
            &["http://app.example"]
        ));
        assert!(allowed("http://evil.example", "gw:1", &["*"]));
        assert!(!allowed(
            "http://evil.example",
            "gw:1",
            &["http://app.example"]
        ));
        assert!(!allowed("http://127.0.0.1:8081", "127.0.0.1:8080", &[]));
        assert!(!allowed("null", "127.0.0.1:8080", &[]));
    }
}
