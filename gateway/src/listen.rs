//! The accept loop. axum's own `serve` has neither a connection limit nor a deadline for
//! a request head, so a client that opens sockets and sends nothing could hold the
//! gateway's file descriptors forever. Here:
//!
//! - At most `max_connections` sockets are open at once, and at most
//!   `max_per_client` from one IP address, so that one client cannot take every slot. A
//!   socket keeps its slots until it closes, whether it stays HTTP or becomes a WebSocket
//!   (the slots travel inside the socket's I/O object, which the upgrade hands over). A
//!   socket over either limit gets a `503` naming it and is closed.
//! - An HTTP request head must arrive within `header_timeout`, counted from when the
//!   connection waits for it (so a kept-alive connection between requests too). After
//!   the upgrade to a WebSocket, `conn`'s pings and idle timeout take over.
//! - With `--tls-cert`, every socket (a refused one too, so that its client can read the
//!   `503`) is a TLS server first; the handshake must also finish within
//!   `header_timeout`.

use std::collections::HashMap;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::{Extension, Router};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_rustls::TlsAcceptor;

/// How long a refused socket may take to read its `503` before it is dropped.
const REFUSAL_GRACE: Duration = Duration::from_secs(1);

/// How many sockets the accept loop lets in, in all and from one client.
pub(crate) struct Limits {
    pub max_connections: usize,
    pub max_per_client: usize,
    pub header_timeout: Duration,
    /// `None` serves plain HTTP.
    pub tls: Option<TlsAcceptor>,
}

/// Serves `app` on `listener` until an accept fails for a reason other than one
/// connection's (such as running out of file descriptors, which is waited out).
pub(crate) async fn serve(listener: TcpListener, app: Router, limits: Limits) -> io::Result<()> {
    let Limits {
        max_connections,
        max_per_client,
        header_timeout,
        tls,
    } = limits;
    let slots = Arc::new(Semaphore::new(max_connections));
    let clients = Arc::new(Clients::new(max_per_client));
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(header_timeout);
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) if is_per_connection(&e) => continue,
            Err(e) if is_resource_limit(&e) => {
                eprintln!("quiver-gateway: accept: {e}; retrying in 1 s");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
            Err(e) => return Err(e),
        };
        let _ = stream.set_nodelay(true);
        let Some(client_slot) = clients.admit(peer.ip()) else {
            let why = format!("this client is at its limit of {max_per_client} connections");
            tokio::spawn(refuse(stream, tls.clone(), why));
            continue;
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            let why = format!("the gateway is at its limit of {max_connections} connections");
            tokio::spawn(refuse(stream, tls.clone(), why));
            continue;
        };
        let socket = Slotted {
            stream,
            _slots: (slot, client_slot),
        };
        // The client's address, for `ConnectInfo` (its budget is per address).
        let service = TowerToHyperService::new(app.clone().layer(Extension(ConnectInfo(peer))));
        let (http, tls) = (http.clone(), tls.clone());
        // An error here is one client's (a bad request, a reset, a timeout): nobody to tell.
        tokio::spawn(async move {
            let _ = match tls {
                None => {
                    http.serve_connection(TokioIo::new(socket), service)
                        .with_upgrades()
                        .await
                }
                Some(tls) => {
                    let Ok(Ok(socket)) =
                        tokio::time::timeout(header_timeout, tls.accept(socket)).await
                    else {
                        return;
                    };
                    http.serve_connection(TokioIo::new(socket), service)
                        .with_upgrades()
                        .await
                }
            };
        });
    }
}

/// Errors that end one accepted connection, not the listener.
fn is_per_connection(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionRefused
            | io::ErrorKind::Interrupted
    )
}

/// Out of file descriptors or memory: other sockets closing will make room.
fn is_resource_limit(e: &io::Error) -> bool {
    // EMFILE, ENFILE, ENOBUFS, ENOMEM on Linux.
    matches!(e.raw_os_error(), Some(24 | 23 | 105 | 12))
}

/// Answers a socket over a limit with a `503` saying `why` (over TLS with `tls`), and
/// closes it.
async fn refuse(stream: TcpStream, tls: Option<TlsAcceptor>, why: String) {
    let answer = async {
        match tls {
            None => answer_503(stream, &why).await,
            Some(tls) => answer_503(tls.accept(stream).await?, &why).await,
        }
    };
    let _ = tokio::time::timeout(REFUSAL_GRACE, answer).await;
}

async fn answer_503(mut stream: impl AsyncRead + AsyncWrite + Unpin, why: &str) -> io::Result<()> {
    let body = format!("{why}\n");
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await?;
    // Read what the client sent until it closes: closing a socket with unread bytes
    // resets it, and the reset can destroy the response before the client reads it.
    let mut sink = [0u8; 4096];
    while stream.read(&mut sink).await? > 0 {}
    Ok(())
}

/// The sockets open from each client address, at most `limit` each.
struct Clients {
    limit: usize,
    open: Mutex<HashMap<IpAddr, usize>>,
}

impl Clients {
    fn new(limit: usize) -> Self {
        Clients {
            limit,
            open: Mutex::new(HashMap::new()),
        }
    }

    /// A slot for one more socket from `ip`, or `None` if it is at the limit.
    fn admit(self: &Arc<Self>, ip: IpAddr) -> Option<ClientSlot> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let count = open.entry(ip).or_insert(0);
        if *count >= self.limit {
            return None;
        }
        *count += 1;
        Some(ClientSlot {
            clients: self.clone(),
            ip,
        })
    }
}

/// One socket's place in its client's count, given back when it is dropped.
struct ClientSlot {
    clients: Arc<Clients>,
    ip: IpAddr,
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        let mut open = self.clients.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = open.get_mut(&self.ip) {
            *count -= 1;
            // Addresses with nothing open are forgotten, so the map cannot grow without end.
            if *count == 0 {
                open.remove(&self.ip);
            }
        }
    }
}

/// A socket with its connection slots, freed when the socket is dropped.
struct Slotted {
    stream: TcpStream,
    _slots: (OwnedSemaphorePermit, ClientSlot),
}

impl AsyncRead for Slotted {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Slotted {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}
