//! Command-line options and the configuration the gateway runs with.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::http::HeaderName;
use clap::Parser;
use tokio_rustls::rustls::ServerConfig;

pub use crate::budget::Limits;
use crate::budget::MIN_STREAM_WINDOW;
use crate::tls::UpstreamTls;

const DAY_SECS: u64 = 24 * 60 * 60;

/// Bridges browser WebSockets (protocol `quiver-flight.v1`) to Arrow Flight gRPC servers.
#[derive(Debug, Parser)]
#[command(name = "quiver-gateway", version)]
pub struct Args {
    /// Address to listen on; WebSocket clients connect to ws://ADDR/flight (wss:// with
    /// --tls-cert).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// Serve wss:// (and static files over https://) with this PEM certificate chain.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// The Flight server requests go to (grpc://host:port, or grpc+tls://host:port).
    /// Required unless --demo.
    #[arg(long, required_unless_present = "demo")]
    pub upstream: Option<String>,
    /// Trust the PEM CA certificates in FILE for grpc+tls upstreams, instead of the
    /// system's roots.
    #[arg(long, value_name = "FILE")]
    pub upstream_ca: Option<PathBuf>,
    /// A PEM client certificate chain sent to grpc+tls upstreams that ask for one (mTLS).
    #[arg(long, value_name = "FILE", requires = "upstream_key")]
    pub upstream_cert: Option<PathBuf>,
    /// The PEM private key of --upstream-cert.
    #[arg(long, value_name = "FILE", requires = "upstream_cert")]
    pub upstream_key: Option<PathBuf>,
    /// Allowed browser Origins (repeatable; "*" allows any). Same-origin pages and
    /// clients that send no Origin are always allowed.
    #[arg(long)]
    pub allow_origin: Vec<String>,
    /// Other Flight locations the gateway may dial for FlightInfo endpoints (repeatable).
    #[arg(long)]
    pub allow_location: Vec<String>,
    /// Cap on a binary frame's payload in bytes.
    #[arg(long, default_value_t = quiver::flight::DEFAULT_MAX_SEGMENT_BYTES)]
    pub max_segment_bytes: usize,
    /// Default DoGet credit window in bytes, and the DoPut window granted to clients.
    #[arg(long, default_value_t = 8 << 20)]
    pub credit_window: u64,
    /// Largest gRPC message accepted from or sent to upstreams (tonic's default is 4 MiB):
    /// by default 256 MiB, or the smallest --max-buffered-bytes* budget if that is less (a
    /// larger message could never be held), 192 MiB with the default budgets.
    #[arg(long)]
    pub max_message_bytes: Option<usize>,
    /// Serve DIR/www and DIR/pkg at /www/ and /pkg/ (DIR is usually the repo root).
    #[arg(long = "static", value_name = "DIR")]
    pub static_dir: Option<PathBuf>,
    /// Run an in-process Flight service with generated data and use it as the upstream.
    #[arg(long)]
    pub demo: bool,
    /// The one service credential: a bearer token clients must present (`auth`
    /// message), also sent upstream. Without it, each client's own token is sent.
    #[arg(long)]
    pub token: Option<String>,
    /// Send this header of the browser's WebSocket upgrade request as gRPC metadata on
    /// the connection's upstream calls (repeatable, case-insensitive). No other header
    /// is forwarded.
    #[arg(long, value_name = "NAME")]
    pub forward_header: Vec<String>,
    /// Close connections with no open stream and no request for this many seconds.
    #[arg(long, default_value_t = 300)]
    pub idle_timeout_secs: u64,
    /// Seconds between keepalive pings.
    #[arg(long, default_value_t = 15)]
    pub ping_interval_secs: u64,
    /// Concurrent streams allowed on one connection.
    #[arg(long, default_value_t = 64)]
    pub max_streams: u32,
    /// Sockets open at once, HTTP or WebSocket; more are answered 503 and closed. Each
    /// WebSocket connection also opens its own HTTP/2 connections upstream, so keep this
    /// well under the process's file descriptor limit.
    #[arg(long, default_value_t = 512)]
    pub max_connections: usize,
    /// Sockets open at once from one IP address; more are answered 503 and closed. Behind
    /// a reverse proxy every client has the proxy's address: raise it to --max-connections.
    #[arg(long, default_value_t = 64)]
    pub max_connections_per_client: usize,
    /// Seconds between HTTP/2 pings to each upstream connection. A ping unanswered for as
    /// long again closes that connection and fails its calls with UNAVAILABLE, so a server
    /// gone without a reset (power loss, a partition) is found within twice this.
    #[arg(long, default_value_t = 20)]
    pub upstream_ping_secs: u64,
    /// Close an HTTP connection whose request head has not arrived within this many
    /// seconds (a kept-alive one waiting for its next request too). A WebSocket is not
    /// affected once upgraded.
    #[arg(long, default_value_t = 30)]
    pub header_timeout_secs: u64,
    /// Bytes the gateway may hold for all its clients: upstream data not yet sent, frames
    /// queued for sockets, DoPut bytes not yet forwarded and HTTP/2 windows granted to
    /// upstreams. A call that would exceed it is refused with RESOURCE_EXHAUSTED.
    #[arg(long, default_value_t = 1 << 30)]
    pub max_buffered_bytes: u64,
    /// The share of --max-buffered-bytes one client IP address may hold.
    #[arg(long, default_value_t = 256 << 20)]
    pub max_buffered_bytes_per_client: u64,
    /// The share of --max-buffered-bytes one connection may hold: by default room for
    /// --max-streams DoGets' 2 MiB HTTP/2 windows and 1 MiB in hand each.
    #[arg(long, default_value_t = 192 << 20)]
    pub max_buffered_bytes_per_connection: u64,
    /// Close a connection that holds bytes while a budget it shares (its client IP's, the
    /// gateway's) is full, one of its streams waits on its client, and the client has
    /// moved under 64 KiB (credit granted, upload sent) for this many seconds; its
    /// upstream calls are cancelled.
    #[arg(long, default_value_t = 60)]
    pub stall_timeout_secs: u64,
}

/// `--max-message-bytes` when not given and the budgets have room for it; by default
/// the 192 MiB per-connection budget caps it.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 256 << 20;

/// The configuration the gateway runs with.
#[derive(Debug, Clone)]
pub struct Config {
    pub upstream: String,
    pub upstream_tls: UpstreamTls,
    /// The certificate `wss://` is served with; `None` serves `ws://`.
    pub tls: Option<Arc<ServerConfig>>,
    pub forward_headers: Vec<HeaderName>,
    pub allow_origins: Vec<String>,
    pub allow_locations: Vec<String>,
    pub max_segment_bytes: usize,
    pub credit_window: u64,
    pub max_message_bytes: usize,
    pub static_dir: Option<PathBuf>,
    pub token: Option<String>,
    pub idle_timeout: Duration,
    pub ping_interval: Duration,
    pub max_streams: u32,
    pub max_connections: usize,
    pub max_connections_per_client: usize,
    pub header_timeout: Duration,
    pub upstream_ping_interval: Duration,
    pub buffer_budget: Limits,
    pub stall_timeout: Duration,
}

impl Config {
    /// Defaults for `upstream`, as the command line has them.
    pub fn new(upstream: impl Into<String>) -> Self {
        Config {
            upstream: upstream.into(),
            upstream_tls: UpstreamTls::default(),
            tls: None,
            forward_headers: Vec::new(),
            allow_origins: Vec::new(),
            allow_locations: Vec::new(),
            max_segment_bytes: quiver::flight::DEFAULT_MAX_SEGMENT_BYTES,
            credit_window: 8 << 20,
            // The default, capped by the per-connection budget below.
            max_message_bytes: 192 << 20,
            static_dir: None,
            token: None,
            idle_timeout: Duration::from_secs(300),
            ping_interval: Duration::from_secs(15),
            max_streams: 64,
            max_connections: 512,
            max_connections_per_client: 64,
            header_timeout: Duration::from_secs(30),
            upstream_ping_interval: Duration::from_secs(20),
            buffer_budget: Limits {
                total: 1 << 30,
                per_client: 256 << 20,
                per_connection: 192 << 20,
            },
            stall_timeout: Duration::from_secs(60),
        }
    }
}

impl Args {
    /// Checks the options and resolves them into a [`Config`].
    pub fn to_config(&self) -> io::Result<Config> {
        let invalid = |m: String| io::Error::new(io::ErrorKind::InvalidInput, m);
        if self.max_segment_bytes < 64 {
            return Err(invalid(format!(
                "--max-segment-bytes must be at least 64, found {}",
                self.max_segment_bytes
            )));
        }
        let upstream = self.upstream.clone().unwrap_or_default();
        let grpc = ["grpc://", "grpc+tcp://", "grpc+tls://"]
            .iter()
            .any(|p| upstream.starts_with(p));
        if !self.demo && !grpc {
            return Err(invalid(format!(
                "--upstream must be grpc://host:port, grpc+tcp://host:port or \
                 grpc+tls://host:port, found {upstream:?}"
            )));
        }
        // A window smaller than a segment only slows every stream; none would hang a
        // DoGet, and one above the protocol's balance limit would fail every stream.
        let windows = self.max_segment_bytes as u64..=quiver::flight::credit::MAX_BALANCE;
        if !windows.contains(&self.credit_window) {
            return Err(invalid(format!(
                "--credit-window must be from --max-segment-bytes ({}) to {} bytes, found {}",
                windows.start(),
                windows.end(),
                self.credit_window
            )));
        }
        if let Some(token) = &self.token {
            crate::token::check_token(token).map_err(|e| invalid(format!("--{e}")))?;
        }
        if self.max_streams == 0 {
            return Err(invalid("--max-streams must be at least 1".into()));
        }
        // Three missed pings end a connection: their sum must be a duration.
        if !(1..=DAY_SECS).contains(&self.ping_interval_secs) {
            return Err(invalid(format!(
                "--ping-interval-secs must be from 1 to {DAY_SECS}, found {}",
                self.ping_interval_secs
            )));
        }
        if self.idle_timeout_secs == 0 {
            return Err(invalid("--idle-timeout-secs must be at least 1".into()));
        }
        if self.max_connections == 0 {
            return Err(invalid("--max-connections must be at least 1".into()));
        }
        if self.max_connections_per_client == 0 {
            return Err(invalid(
                "--max-connections-per-client must be at least 1".into(),
            ));
        }
        if !(1..=DAY_SECS).contains(&self.header_timeout_secs) {
            return Err(invalid(format!(
                "--header-timeout-secs must be from 1 to {DAY_SECS}, found {}",
                self.header_timeout_secs
            )));
        }
        if !(1..=DAY_SECS).contains(&self.upstream_ping_secs) {
            return Err(invalid(format!(
                "--upstream-ping-secs must be from 1 to {DAY_SECS}, found {}",
                self.upstream_ping_secs
            )));
        }
        // A connection must hold at least one DoGet's smallest HTTP/2 window.
        let least = MIN_STREAM_WINDOW as u64;
        let budgets = [
            ("--max-buffered-bytes", self.max_buffered_bytes),
            (
                "--max-buffered-bytes-per-client",
                self.max_buffered_bytes_per_client,
            ),
            (
                "--max-buffered-bytes-per-connection",
                self.max_buffered_bytes_per_connection,
            ),
        ];
        for (option, bytes) in budgets {
            if bytes < least {
                return Err(invalid(format!(
                    "{option} must be at least {least}, found {bytes}"
                )));
            }
        }
        // Every message is counted against the budgets: one above the smallest would be
        // read whole from its upstream only to be refused.
        let (smallest_option, smallest) = budgets
            .into_iter()
            .min_by_key(|(_, bytes)| *bytes)
            .expect("three budgets");
        let max_message_bytes = match self.max_message_bytes {
            None => DEFAULT_MAX_MESSAGE_BYTES.min(usize::try_from(smallest).unwrap_or(usize::MAX)),
            Some(bytes) if bytes as u64 > smallest => {
                return Err(invalid(format!(
                    "--max-message-bytes must be at most {smallest_option} ({smallest}), \
                     found {bytes}: a larger message could never be held"
                )))
            }
            Some(bytes) => bytes,
        };
        if !(1..=DAY_SECS).contains(&self.stall_timeout_secs) {
            return Err(invalid(format!(
                "--stall-timeout-secs must be from 1 to {DAY_SECS}, found {}",
                self.stall_timeout_secs
            )));
        }
        let forward_headers = self
            .forward_header
            .iter()
            .map(|name| crate::forward::check_name(name).map_err(invalid))
            .collect::<io::Result<_>>()?;
        let identity = self
            .upstream_cert
            .as_deref()
            .zip(self.upstream_key.as_deref());
        let upstream_tls = UpstreamTls::from_files(self.upstream_ca.as_deref(), identity)?;
        let tls = match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Some(crate::tls::server_config_from_files(cert, key)?),
            _ => None,
        };
        Ok(Config {
            upstream,
            upstream_tls,
            tls,
            forward_headers,
            allow_origins: self.allow_origin.clone(),
            allow_locations: self.allow_location.clone(),
            max_segment_bytes: self.max_segment_bytes,
            credit_window: self.credit_window,
            max_message_bytes,
            static_dir: self.static_dir.clone(),
            token: self.token.clone(),
            idle_timeout: Duration::from_secs(self.idle_timeout_secs),
            ping_interval: Duration::from_secs(self.ping_interval_secs),
            max_streams: self.max_streams,
            max_connections: self.max_connections,
            max_connections_per_client: self.max_connections_per_client,
            header_timeout: Duration::from_secs(self.header_timeout_secs),
            upstream_ping_interval: Duration::from_secs(self.upstream_ping_secs),
            buffer_budget: Limits {
                total: self.max_buffered_bytes,
                per_client: self.max_buffered_bytes_per_client,
                per_connection: self.max_buffered_bytes_per_connection,
            },
            stall_timeout: Duration::from_secs(self.stall_timeout_secs),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(args: &[&str]) -> io::Result<Config> {
        Args::try_parse_from([&["quiver-gateway"], args].concat())
            .map_err(|e| io::Error::other(e.to_string()))?
            .to_config()
    }

    #[test]
    fn options() {
        let c = config(&[
            "--upstream",
            "grpc://127.0.0.1:9",
            "--allow-location",
            "grpc://h:1",
        ])
        .unwrap();
        assert_eq!(c.max_segment_bytes, 1 << 20);
        assert_eq!(c.allow_locations, ["grpc://h:1"]);
        assert_eq!(
            config(&["--upstream", "http://h:1"])
                .unwrap_err()
                .to_string(),
            "--upstream must be grpc://host:port, grpc+tcp://host:port or \
             grpc+tls://host:port, found \"http://h:1\""
        );
        config(&["--upstream", "grpc+tls://h:1"]).unwrap();
        assert!(config(&[]).is_err(), "--upstream or --demo is required");
        config(&["--demo"]).unwrap();
        assert!(config(&["--demo", "--max-segment-bytes", "8"]).is_err());
        assert_eq!(
            config(&["--demo", "--credit-window", "0"])
                .unwrap_err()
                .to_string(),
            "--credit-window must be from --max-segment-bytes (1048576) to 1099511627776 bytes, \
             found 0"
        );
        assert!(config(&["--demo", "--credit-window", "1099511627777"]).is_err());
        assert!(config(&["--demo", "--max-streams", "0"]).is_err());
        assert_eq!(
            config(&["--demo", "--token", "pass word"])
                .unwrap_err()
                .to_string(),
            "--token must be visible ASCII (0x21 to 0x7E), found byte 0x20 at index 4"
        );
        assert!(config(&["--demo", "--ping-interval-secs", "6148914691236517206"]).is_err());
        assert!(config(&["--demo", "--idle-timeout-secs", "0"]).is_err());
        assert!(config(&["--demo", "--max-connections", "0"]).is_err());
        assert!(config(&["--demo", "--max-connections-per-client", "0"]).is_err());
        assert!(config(&["--demo", "--header-timeout-secs", "0"]).is_err());
        assert!(config(&["--demo", "--header-timeout-secs", "86401"]).is_err());
        assert_eq!(c.upstream_ping_interval, Duration::from_secs(20));
        let pings = config(&["--demo", "--upstream-ping-secs", "5"]).unwrap();
        assert_eq!(pings.upstream_ping_interval, Duration::from_secs(5));
        assert!(config(&["--demo", "--upstream-ping-secs", "0"]).is_err());
        assert!(config(&["--demo", "--upstream-ping-secs", "86401"]).is_err());
        assert_eq!(c.buffer_budget, Config::new("grpc://h:1").buffer_budget);
        assert_eq!(c.buffer_budget.total, 1 << 30);
        assert_eq!(
            config(&["--demo", "--max-buffered-bytes-per-client", "65535"])
                .unwrap_err()
                .to_string(),
            "--max-buffered-bytes-per-client must be at least 65536, found 65535"
        );
        let budget = config(&[
            "--demo",
            "--max-buffered-bytes",
            "65536",
            "--stall-timeout-secs",
            "2",
        ])
        .unwrap();
        assert_eq!(budget.buffer_budget.total, 65536);
        assert_eq!(
            budget.max_message_bytes, 65536,
            "the smallest budget caps the default"
        );
        assert_eq!(
            c.max_message_bytes,
            192 << 20,
            "the per-connection budget caps it"
        );
        assert_eq!(
            config(&["--demo", "--max-message-bytes", "201326593"])
                .unwrap_err()
                .to_string(),
            "--max-message-bytes must be at most --max-buffered-bytes-per-connection \
             (201326592), found 201326593: a larger message could never be held"
        );
        let larger = config(&["--demo", "--max-message-bytes", "201326592"]).unwrap();
        assert_eq!(larger.max_message_bytes, 201326592);
        assert_eq!(budget.stall_timeout, Duration::from_secs(2));
        assert!(config(&["--demo", "--stall-timeout-secs", "0"]).is_err());
    }

    #[test]
    fn tls_and_forwarding_options() {
        let c = config(&["--demo", "--forward-header", "X-User"]).unwrap();
        assert_eq!(c.forward_headers, ["x-user"]);
        assert_eq!(
            config(&["--demo", "--forward-header", "Host"])
                .unwrap_err()
                .to_string(),
            "--forward-header Host: the header belongs to HTTP/2, gRPC or the WebSocket \
             upgrade and cannot be forwarded"
        );
        let missing = "/nonexistent/quiver-ca.pem";
        assert_eq!(
            config(&["--demo", "--upstream-ca", missing])
                .unwrap_err()
                .to_string(),
            format!("--upstream-ca {missing}: No such file or directory (os error 2)")
        );
        let not_pem = env!("CARGO_MANIFEST_PATH");
        assert_eq!(
            config(&["--demo", "--tls-cert", not_pem, "--tls-key", not_pem])
                .unwrap_err()
                .to_string(),
            format!("--tls-cert {not_pem}: expected a PEM certificate, found none")
        );
        let error = config(&["--demo", "--upstream-cert", not_pem]).unwrap_err();
        assert!(
            error.to_string().contains("--upstream-key <FILE>"),
            "clap asks for the key: {error}"
        );
    }
}
