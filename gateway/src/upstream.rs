//! Which Flight servers the gateway may dial, and the gRPC channels to them. A FlightInfo
//! can name any location; only the upstream and the `--allow-location` list are ever
//! dialled, so that clients cannot make the gateway reach arbitrary hosts (SSRF).
//!
//! Each WebSocket connection has its own channels ([`Pool`]). On a shared HTTP/2
//! connection, data a stalled stream has not read still counts against the connection's
//! flow-control window, so one client that stops granting credit would stall every
//! other client's streams. Per-client connections confine that to the client, and the
//! connection window is sized so that its own streams cannot starve each other.
//!
//! A stream's HTTP/2 window is what its upstream may send before the gateway reads, so
//! it is memory held for the client (`budget`). It is sized from the credit the client
//! opens a DoGet with ([`stream_window`]): a client that grants little is given little.
//! HTTP/2 sets the window per connection, so a connection's channels are also keyed by
//! window; there are at most six sizes.
//!
//! `grpc+tls` locations are dialled over TLS only, checked against the system's roots or
//! `--upstream-ca` and the location's hostname; a TLS failure fails the call, never
//! falling back to plaintext.

use std::collections::HashMap;
use std::io;
use std::time::Duration;

use arrow_flight::flight_service_client::FlightServiceClient;
use axum::http::{header, HeaderMap, HeaderValue};
use tonic::client::Grpc;
use tonic::metadata::MetadataMap;
use tonic::transport::{Channel, ClientTlsConfig, Endpoint};
use tonic::{Extensions, Request, Status};

use crate::budget::{MAX_STREAM_WINDOW, MIN_STREAM_WINDOW};
use crate::config::Config;
use crate::token::check_token;

/// One Flight server's channel, and the message size limit every call to it has.
#[derive(Clone, Debug)]
pub(crate) struct Client {
    location: String,
    channel: Channel,
    max_message_bytes: usize,
    max_segment_bytes: usize,
}

impl Client {
    /// The location this client dials, as `grpc://` or `grpc+tls://`.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// The generated Flight client, for every call but DoPut.
    pub fn flight(&self) -> FlightServiceClient<Channel> {
        FlightServiceClient::new(self.channel.clone())
            .max_decoding_message_size(self.grpc_message_bytes())
            .max_encoding_message_size(self.grpc_message_bytes())
    }

    /// A plain gRPC client, for DoPut's own codec (see `doput.rs`).
    pub fn grpc(&self) -> Grpc<Channel> {
        Grpc::new(self.channel.clone())
            .max_decoding_message_size(self.grpc_message_bytes())
            .max_encoding_message_size(self.grpc_message_bytes())
    }

    /// A `FlightData` carries an IPC message of up to `max_message_bytes` plus its
    /// app_metadata (up to a frame), descriptor and protobuf framing: room for those too.
    fn grpc_message_bytes(&self) -> usize {
        self.max_message_bytes
            .saturating_add(self.max_segment_bytes + (64 << 10))
    }
}

/// The largest HTTP/2 frame the upstream may send. h2's default, 16 KiB, has the gateway
/// read a batch 8 KiB at a time, one `recv` each, and grow its read buffer frame by frame
/// (docs/flight-cost.md). 1 MiB saved more CPU, but left starved streams' data unread in
/// the kernel (budget.rs's memory test), for a reason not found yet.
const MAX_FRAME_BYTES: u32 = 64 << 10;

/// Flight's "same server as the FlightInfo" location.
const REUSE_CONNECTION: &str = "arrow-flight-reuse-connection://?";

/// The stream window for a DoGet opened with `credit`: the credit, rounded up to a
/// power of two within the window sizes.
pub(crate) fn stream_window(credit: u64) -> u32 {
    let clamped = credit.clamp(MIN_STREAM_WINDOW.into(), MAX_STREAM_WINDOW.into()) as u32;
    clamped.next_power_of_two()
}

pub(crate) struct Upstreams {
    default: String,
    allowed: Vec<String>,
    max_message_bytes: usize,
    max_segment_bytes: usize,
    max_streams: u32,
    ping_interval: Duration,
    /// `None` when no allowed location is `grpc+tls`.
    tls: Option<ClientTlsConfig>,
}

/// One WebSocket connection's channels, by location and stream window.
#[derive(Default)]
pub(crate) struct Pool {
    clients: HashMap<(String, u32), Client>,
}

impl Upstreams {
    /// The upstreams `config` allows; fails if TLS ones need roots the system lacks.
    pub fn new(config: &Config) -> io::Result<Self> {
        let default = normalize(&config.upstream);
        let mut allowed: Vec<String> = config
            .allow_locations
            .iter()
            .map(|l| normalize(l))
            .collect();
        allowed.push(default.clone());
        let tls = match allowed.iter().any(|l| l.starts_with(TLS)) {
            true => Some(config.upstream_tls.client_config()?),
            false => None,
        };
        Ok(Upstreams {
            default,
            allowed,
            max_message_bytes: config.max_message_bytes,
            max_segment_bytes: config.max_segment_bytes,
            max_streams: config.max_streams.max(1),
            ping_interval: config.upstream_ping_interval,
            tls,
        })
    }

    /// Room for every stream of a connection at `stream_window`.
    fn connection_window(&self, stream_window: u32) -> u32 {
        // h2 refuses (by panicking) a window above 2^31 - 1.
        stream_window
            .saturating_mul(self.max_streams)
            .min(i32::MAX as u32)
    }

    /// The client for `location` (the upstream when absent), if it is allowed, whose
    /// streams have HTTP/2 windows of `window` bytes.
    pub fn client(
        &self,
        pool: &mut Pool,
        location: Option<&str>,
        window: u32,
    ) -> Result<Client, Status> {
        let key = match location {
            None | Some("") | Some(REUSE_CONNECTION) => self.default.clone(),
            Some(l) => normalize(l),
        };
        if !self.allowed.contains(&key) {
            return Err(Status::permission_denied(format!(
                "location {} is not in the gateway's allowed locations",
                location.unwrap_or_default()
            )));
        }
        if let Some(c) = pool.clients.get(&(key.clone(), window)) {
            return Ok(c.clone());
        }
        let mut endpoint = Endpoint::from_shared(http_uri(&key)?)
            .map_err(|e| Status::invalid_argument(format!("location {key}: {e}")))?;
        if key.starts_with(TLS) {
            let tls = self
                .tls
                .clone()
                .ok_or_else(|| Status::internal(format!("location {key}: no TLS configuration")))?;
            endpoint = endpoint
                .tls_config(tls)
                .map_err(|e| Status::invalid_argument(format!("location {key}: {e}")))?;
        }
        let channel = endpoint
            .initial_stream_window_size(window)
            .initial_connection_window_size(self.connection_window(window))
            .max_frame_size(MAX_FRAME_BYTES)
            // A server that vanishes without a reset (power loss, a partition) is found by
            // HTTP/2 pings, and its streams fail instead of waiting forever.
            .connect_timeout(Duration::from_secs(10))
            .tcp_keepalive(Some(Duration::from_secs(60)))
            .http2_keep_alive_interval(self.ping_interval)
            .keep_alive_timeout(self.ping_interval)
            .keep_alive_while_idle(true)
            .connect_lazy();
        let client = Client {
            location: key.clone(),
            channel,
            max_message_bytes: self.max_message_bytes,
            max_segment_bytes: self.max_segment_bytes,
        };
        pool.clients.insert((key, window), client.clone());
        Ok(client)
    }
}

/// What every upstream call of one connection carries.
#[derive(Clone, Debug, Default)]
pub(crate) struct CallMetadata {
    /// The upgrade request's headers named by `--forward-header` (`forward`).
    pub forwarded: HeaderMap,
    /// The bearer token of the client's `auth` message.
    pub token: Option<String>,
}

/// Wraps a request message with the forwarded headers and, when there is a token,
/// `authorization: Bearer <token>`, which replaces a forwarded `authorization`: the
/// client's `auth` message is the later and more explicit credential.
pub(crate) fn request<T>(message: T, metadata: &CallMetadata) -> Result<Request<T>, Status> {
    let mut headers = metadata.forwarded.clone();
    if let Some(token) = &metadata.token {
        check_token(token).map_err(Status::invalid_argument)?;
        let value = HeaderValue::try_from(format!("Bearer {token}"))
            .map_err(|e| Status::internal(format!("token header: {e}")))?;
        headers.insert(header::AUTHORIZATION, value);
    }
    let metadata = MetadataMap::from_headers(headers);
    Ok(Request::from_parts(
        metadata,
        Extensions::default(),
        message,
    ))
}

/// The scheme of locations dialled over TLS.
const TLS: &str = "grpc+tls://";

/// `grpc+tcp://` and `grpc://` name the same server.
fn normalize(location: &str) -> String {
    let l = location.trim().trim_end_matches('/');
    match l.strip_prefix("grpc+tcp://") {
        Some(rest) => format!("grpc://{rest}"),
        None => l.to_string(),
    }
}

/// The URI tonic dials for a normalized location: `https` makes it use TLS.
fn http_uri(location: &str) -> Result<String, Status> {
    if let Some(rest) = location.strip_prefix("grpc://") {
        return Ok(format!("http://{rest}"));
    }
    match location.strip_prefix(TLS) {
        Some(rest) => Ok(format!("https://{rest}")),
        None => Err(Status::invalid_argument(format!(
            "location {location}: only grpc://, grpc+tcp:// and grpc+tls:// are supported"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_connection_window_stays_within_what_h2_accepts() {
        let mut config = Config::new("grpc://127.0.0.1:1000");
        let window = MAX_STREAM_WINDOW;
        assert_eq!(
            Upstreams::new(&config).unwrap().connection_window(window),
            64 * window
        );
        config.max_streams = 4096;
        let upstreams = Upstreams::new(&config).unwrap();
        assert_eq!(upstreams.connection_window(window), i32::MAX as u32);
    }

    #[test]
    fn stream_windows_follow_the_credit_a_client_opens_with() {
        assert_eq!(stream_window(0), 64 << 10);
        assert_eq!(stream_window(100 << 10), 128 << 10);
        assert_eq!(stream_window(256 << 10), 256 << 10);
        assert_eq!(stream_window(8 << 20), 2 << 20);
        assert_eq!(stream_window(u64::MAX), 2 << 20);
    }

    #[test]
    fn allow_list() {
        let mut config = Config::new("grpc://127.0.0.1:1000");
        config.allow_locations = vec!["grpc+tcp://127.0.0.1:2000/".into()];
        let u = Upstreams::new(&config).unwrap();
        assert_eq!(u.default, "grpc://127.0.0.1:1000");
        assert!(u.allowed.contains(&"grpc://127.0.0.1:2000".to_string()));
        let denied = |loc| {
            u.client(&mut Pool::default(), Some(loc), MIN_STREAM_WINDOW)
                .unwrap_err()
        };
        assert_eq!(
            denied("grpc://127.0.0.1:3000").code(),
            tonic::Code::PermissionDenied
        );
        assert_eq!(
            denied("grpc://169.254.169.254:80").message(),
            "location grpc://169.254.169.254:80 is not in the gateway's allowed locations"
        );
        assert_eq!(
            denied("grpc+tls://127.0.0.1:2000").code(),
            tonic::Code::PermissionDenied
        );
        assert_eq!(http_uri("grpc+tls://h:1").unwrap(), "https://h:1");
        assert_eq!(
            http_uri("https://h:1").unwrap_err().message(),
            "location https://h:1: only grpc://, grpc+tcp:// and grpc+tls:// are supported"
        );
    }
}
