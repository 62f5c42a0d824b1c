//! Which Flight servers the gateway may dial, and the gRPC channels to them. A FlightInfo
//! can name any location; only the upstream and the `--allow-location` list are ever
//! dialled, so that clients cannot make the gateway reach arbitrary hosts (SSRF).
//!
//! Each WebSocket connection has its own channels ([`Pool`]). On a shared HTTP/2
//! connection, data a stalled stream has not read still counts against the connection's
//! flow-control window, so one client that stops granting credit would stall every
//! other client's streams. Per-client connections confine that to the client, and the
//! connection window is sized so that its own streams cannot starve each other.

use std::collections::HashMap;
use std::time::Duration;

use arrow_flight::flight_service_client::FlightServiceClient;
use tonic::client::Grpc;
use tonic::metadata::MetadataValue;
use tonic::transport::{Channel, Endpoint};
use tonic::{Request, Status};

use crate::config::Config;

/// One Flight server's channel, and the message size limit every call to it has.
#[derive(Clone, Debug)]
pub(crate) struct Client {
    channel: Channel,
    max_message_bytes: usize,
    max_segment_bytes: usize,
}

impl Client {
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

/// Flight's "same server as the FlightInfo" location.
const REUSE_CONNECTION: &str = "arrow-flight-reuse-connection://?";

/// HTTP/2 flow-control window of one upstream stream: what a stalled stream may hold.
const STREAM_WINDOW: u32 = 2 << 20;

pub(crate) struct Upstreams {
    default: String,
    allowed: Vec<String>,
    max_message_bytes: usize,
    max_segment_bytes: usize,
    connection_window: u32,
    ping_interval: Duration,
}

/// One WebSocket connection's channels, by location.
#[derive(Default)]
pub(crate) struct Pool {
    clients: HashMap<String, Client>,
}

impl Upstreams {
    pub fn new(config: &Config) -> Self {
        let default = normalize(&config.upstream);
        let mut allowed: Vec<String> = config
            .allow_locations
            .iter()
            .map(|l| normalize(l))
            .collect();
        allowed.push(default.clone());
        Upstreams {
            default,
            allowed,
            max_message_bytes: config.max_message_bytes,
            max_segment_bytes: config.max_segment_bytes,
            // h2 refuses (by panicking) a window above 2^31 - 1.
            connection_window: STREAM_WINDOW
                .saturating_mul(config.max_streams.max(1))
                .min(i32::MAX as u32),
            ping_interval: config.upstream_ping_interval,
        }
    }

    /// The client for `location` (the upstream when absent), if it is allowed.
    pub fn client(&self, pool: &mut Pool, location: Option<&str>) -> Result<Client, Status> {
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
        if let Some(c) = pool.clients.get(&key) {
            return Ok(c.clone());
        }
        let uri = http_uri(&key)?;
        let channel = Endpoint::from_shared(uri)
            .map_err(|e| Status::invalid_argument(format!("location {key}: {e}")))?
            .initial_stream_window_size(STREAM_WINDOW)
            .initial_connection_window_size(self.connection_window)
            // A server that vanishes without a reset (power loss, a partition) is found by
            // HTTP/2 pings, and its streams fail instead of waiting forever.
            .connect_timeout(Duration::from_secs(10))
            .tcp_keepalive(Some(Duration::from_secs(60)))
            .http2_keep_alive_interval(self.ping_interval)
            .keep_alive_timeout(self.ping_interval)
            .keep_alive_while_idle(true)
            .connect_lazy();
        let client = Client {
            channel,
            max_message_bytes: self.max_message_bytes,
            max_segment_bytes: self.max_segment_bytes,
        };
        pool.clients.insert(key, client.clone());
        Ok(client)
    }
}

/// Wraps a request message, adding `authorization: Bearer <token>`.
pub(crate) fn request<T>(message: T, token: Option<&str>) -> Result<Request<T>, Status> {
    let mut req = Request::new(message);
    if let Some(token) = token {
        check_token(token).map_err(Status::invalid_argument)?;
        let value = MetadataValue::try_from(format!("Bearer {token}"))
            .map_err(|e| Status::internal(format!("token header: {e}")))?;
        req.metadata_mut().insert("authorization", value);
    }
    Ok(req)
}

/// A token must be visible ASCII, as bearer tokens are. HTTP/2 would pass bytes above
/// 0x7F, and servers fail on them in their own ways (pyarrow with a Python traceback).
/// The error names the first bad byte, never the token.
pub(crate) fn check_token(token: &str) -> Result<(), String> {
    match token.bytes().position(|b| !b.is_ascii_graphic()) {
        None => Ok(()),
        Some(at) => Err(format!(
            "token must be visible ASCII (0x21 to 0x7E), found byte {:#04X} at index {at}",
            token.as_bytes()[at]
        )),
    }
}

/// `grpc+tcp://` and `grpc://` name the same server.
fn normalize(location: &str) -> String {
    let l = location.trim().trim_end_matches('/');
    match l.strip_prefix("grpc+tcp://") {
        Some(rest) => format!("grpc://{rest}"),
        None => l.to_string(),
    }
}

fn http_uri(location: &str) -> Result<String, Status> {
    match location.strip_prefix("grpc://") {
        Some(rest) => Ok(format!("http://{rest}")),
        None => Err(Status::invalid_argument(format!(
            "location {location}: only grpc:// and grpc+tcp:// are supported"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_connection_window_stays_within_what_h2_accepts() {
        let mut config = Config::new("grpc://127.0.0.1:1000");
        assert_eq!(
            Upstreams::new(&config).connection_window,
            64 * STREAM_WINDOW
        );
        config.max_streams = 4096;
        assert_eq!(Upstreams::new(&config).connection_window, i32::MAX as u32);
    }

    #[test]
    fn allow_list() {
        let mut config = Config::new("grpc://127.0.0.1:1000");
        config.allow_locations = vec!["grpc+tcp://127.0.0.1:2000/".into()];
        let u = Upstreams::new(&config);
        assert_eq!(u.default, "grpc://127.0.0.1:1000");
        assert!(u.allowed.contains(&"grpc://127.0.0.1:2000".to_string()));
        let denied = |loc| u.client(&mut Pool::default(), Some(loc)).unwrap_err();
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
        assert_eq!(
            http_uri("grpc+tls://h:1").unwrap_err().code(),
            tonic::Code::InvalidArgument
        );
    }
}
