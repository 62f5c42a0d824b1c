//! The gateway as a library, so that tests run it in-process on an ephemeral port.
//!
//! - [`config`]: command-line options and the resolved configuration.
//! - `listen`: the accept loop (connection limit, deadline for a request head).
//! - `http`: the axum router (WebSocket upgrade, Origin check).
//! - `static_files`: `--static`, the files under `www/` and `pkg/`.
//! - [`tls`]: certificates from PEM files, for `wss://` and `grpc+tls` upstreams.
//! - `forward`: `--forward-header`, the upgrade request's headers sent upstream.
//! - `shared`: what every connection shares (configuration, upstreams).
//! - `conn`: one WebSocket connection's lifecycle: reading, keepalive, writing, closing.
//! - `streams`: one connection's stream table and the handling of client messages.
//! - `doget`, `doput`, `calls`: the Flight calls, one task per stream.
//! - `budget`: the bytes held for clients, in all, per client IP and per connection.
//! - `credit`: a DoGet stream's credit, shared by the connection and the stream's task.
//! - `out`: the bounded queue of messages to the socket.
//! - `convert`: Flight protobuf messages to and from the protocol's JSON.
//! - `sql`: Flight SQL commands and actions in JSON, encoded with arrow-flight's types.
//! - `status`: what a browser sees of a status (lost connections, upstream text).
//! - `token`: the bytes a bearer token may hold.
//! - `upstream`: the location allow-list and each connection's gRPC channels.
//! - [`demo`]: an in-process Flight service with generated data (`--demo`).

mod auth;
mod budget;
mod calls;
pub mod config;
mod conn;
mod convert;
mod credit;
pub mod demo;
mod doget;
mod doput;
mod forward;
mod http;
mod listen;
mod out;
mod shared;
mod sql;
mod static_files;
mod status;
mod streams;
pub mod tls;
mod token;
mod upstream;

use std::io;

use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

pub use config::{Args, Config};

/// Runs the gateway the command line describes until Ctrl-C.
pub async fn run(args: Args) -> io::Result<()> {
    let mut config = args.to_config()?;
    if args.demo {
        let addr = demo::spawn(demo::Demo::default()).await?;
        config.upstream = format!("grpc://{addr}");
        eprintln!("quiver-gateway: demo Flight service on grpc://{addr}");
    }
    let listener = TcpListener::bind(&args.listen).await?;
    let scheme = if config.tls.is_some() { "wss" } else { "ws" };
    let line = format!(
        "quiver-gateway: {scheme}://{}/flight -> {}",
        listener.local_addr()?,
        config.upstream
    );
    // A bad option (no CA for a grpc+tls upstream) stops the gateway before it says
    // where it listens.
    let (app, limits) = prepare(config)?;
    eprintln!("{line}");
    tokio::select! {
        r = listen::serve(listener, app, limits) => r,
        _ = tokio::signal::ctrl_c() => Ok(()),
    }
}

/// Serves WebSocket clients (and static files) on `listener`, over TLS when
/// `config.tls` is set.
pub async fn serve(config: Config, listener: TcpListener) -> io::Result<()> {
    let (app, limits) = prepare(config)?;
    listen::serve(listener, app, limits).await
}

/// The router and the accept loop's limits for `config`.
fn prepare(config: Config) -> io::Result<(axum::Router, listen::Limits)> {
    let limits = listen::Limits {
        max_connections: config.max_connections,
        max_per_client: config.max_connections_per_client,
        header_timeout: config.header_timeout,
        tls: config.tls.clone().map(TlsAcceptor::from),
    };
    Ok((http::router(config)?, limits))
}
