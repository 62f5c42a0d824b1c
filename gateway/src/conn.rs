//! One WebSocket connection: parses client messages, runs one task per stream, sends
//! each stream's terminal status, pings, and closes idle or misbehaving connections.
//! A protocol error closes only this connection, with close code 1002.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::ws::{CloseFrame, Message, WebSocket};
use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use quiver::flight::control::{ClientMessage, ServerMessage};
use quiver::flight::credit::Credit;
use quiver::flight::frame::{Frame, FrameKind, HEADER_LEN};
use quiver::flight::streams::StreamIds;
use quiver::flight::{ProtocolError, VERSION};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tonic::Status;

use crate::calls;
use crate::convert::{descriptor_to_proto, status_message};
use crate::credit::SharedCredit;
use crate::doget::DoGet;
use crate::doput::{DoPut, Upload};
use crate::http::Shared;
use crate::out::send_json;
use crate::upstream::Pool;

/// Messages queued for the socket; a full queue pauses the stream tasks.
const OUT_QUEUE: usize = 16;

/// Missed pings after which the peer is taken for gone.
const MISSED_PINGS: u32 = 3;

/// Why a connection ends.
enum Close {
    /// The client closed or the socket failed.
    Gone,
    /// No stream and no request for the idle timeout, or no answer to pings.
    Idle(&'static str),
    Protocol(ProtocolError),
    /// The socket failed, e.g. a message over the size limit; the peer may still read.
    Transport(String),
}

impl From<ProtocolError> for Close {
    fn from(e: ProtocolError) -> Self {
        Close::Protocol(e)
    }
}

enum Kind {
    Get(Arc<SharedCredit>),
    Put {
        /// Frames on their way to the upload task, at most `queued_frames(window)`: each
        /// frame costs its payload in credit, but an empty one costs nothing.
        uploads: mpsc::Sender<Upload>,
        /// Room kept for the end of the upload, which must neither wait nor be lost;
        /// `None` once the client has sent `end`.
        end: Option<mpsc::OwnedPermit<Upload>>,
        credit: Arc<Mutex<Credit>>,
    },
    Call,
}

struct Entry {
    task: JoinHandle<()>,
    kind: Kind,
}

pub(crate) async fn run(socket: WebSocket, shared: Arc<Shared>) {
    let (sink, mut stream) = socket.split();
    let (out, out_rx) = mpsc::channel(OUT_QUEUE);
    let written = Arc::new(Mutex::new(Instant::now()));
    let writer = tokio::spawn(write_loop(sink, out_rx, written.clone()));
    let (done_tx, done_rx) = mpsc::unbounded_channel();
    let mut conn = Conn {
        shared,
        out,
        token: None,
        streams: HashMap::new(),
        ids: StreamIds::default(),
        pool: Pool::default(),
        done_tx,
    };
    let heard = Mutex::new(Instant::now());
    let ping_every = conn.shared.config.ping_interval;
    let queue = conn.out.clone();
    // The watchdog runs beside `serve`, whose sends wait while the socket's queue is
    // full: a client that stops reading fills it and would otherwise never time out.
    let close = tokio::select! {
        close = conn.serve(&mut stream, done_rx, &heard) => close,
        close = watchdog(&heard, &written, &queue, ping_every) => close,
    };
    drop(queue);
    let handshake = !matches!(close, Close::Gone);
    // Aborting drops each upstream call, which cancels it on the server.
    for (_, entry) in conn.streams.drain() {
        entry.task.abort();
    }
    // Each send below waits for room in the queue, which a client that does not read
    // never makes: all of it is bounded, and then the writer is stopped.
    let grace = Duration::from_secs(2);
    let goodbye = async {
        let frame = match close {
            Close::Gone => None,
            Close::Idle(reason) => Some(CloseFrame {
                code: 1000,
                reason: reason.into(),
            }),
            Close::Protocol(e) => Some(protocol_close(&conn.out, e.to_string()).await),
            Close::Transport(message) => Some(protocol_close(&conn.out, message).await),
        };
        if let Some(frame) = frame {
            let _ = conn.out.send(Message::Close(Some(frame))).await;
        }
    };
    let _ = tokio::time::timeout(grace, goodbye).await;
    drop(conn);
    let mut writer = writer;
    if tokio::time::timeout(grace, &mut writer).await.is_err() {
        writer.abort();
    }
    if handshake {
        // Read until the client's close frame: closing the socket with its unread bytes
        // (a pong, the rest of a frame) in our buffer would reset the connection and
        // could destroy the error message and close frame before the client reads them.
        let _ = tokio::time::timeout(grace, async {
            while let Some(Ok(msg)) = stream.next().await {
                if matches!(msg, Message::Close(_)) {
                    break;
                }
            }
        })
        .await;
    }
}

/// Resolves once, for `MISSED_PINGS` pings, the peer has sent nothing (not even a pong),
/// or messages have waited for it while none could be written: a client that keeps
/// sending but never reads is closed too.
async fn watchdog(
    heard: &Mutex<Instant>,
    written: &Mutex<Instant>,
    queue: &mpsc::Sender<Message>,
    ping_every: Duration,
) -> Close {
    let limit = ping_every * MISSED_PINGS;
    loop {
        let silent = read_instant(heard).elapsed();
        if silent >= limit {
            return Close::Idle("no answer to pings");
        }
        let waiting = queue.capacity() < queue.max_capacity();
        let stalled = read_instant(written).elapsed();
        if waiting && stalled >= limit {
            return Close::Idle("not reading");
        }
        tokio::time::sleep((limit - silent).min(ping_every)).await;
    }
}

fn read_instant(at: &Mutex<Instant>) -> Instant {
    *at.lock().unwrap_or_else(|e| e.into_inner())
}

/// Tells the client why its connection ends, and makes the 1002 close frame.
async fn protocol_close(out: &mpsc::Sender<Message>, message: String) -> CloseFrame {
    let _ = send_json(
        out,
        &ServerMessage::Error {
            message: message.clone(),
        },
    )
    .await;
    CloseFrame {
        code: 1002,
        reason: truncate(&message, 120).into(),
    }
}

/// Writes queued messages to the socket. `written` is when the writer last made
/// progress: took a message from the queue, or finished writing one.
async fn write_loop(
    mut sink: futures::stream::SplitSink<WebSocket, Message>,
    mut rx: mpsc::Receiver<Message>,
    written: Arc<Mutex<Instant>>,
) {
    let progress = || *written.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    while let Some(msg) = rx.recv().await {
        progress();
        let closing = matches!(msg, Message::Close(_));
        if sink.send(msg).await.is_err() || closing {
            break;
        }
        progress();
    }
    let _ = sink.close().await;
}

/// A close reason must fit a control frame (123 bytes); cut on a char boundary.
fn truncate(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

struct Conn {
    shared: Arc<Shared>,
    out: mpsc::Sender<Message>,
    token: Option<String>,
    streams: HashMap<u32, Entry>,
    ids: StreamIds,
    pool: Pool,
    done_tx: mpsc::UnboundedSender<(u32, Result<(), Status>)>,
}

impl Conn {
    async fn serve(
        &mut self,
        socket: &mut futures::stream::SplitStream<WebSocket>,
        mut done: mpsc::UnboundedReceiver<(u32, Result<(), Status>)>,
        heard: &Mutex<Instant>,
    ) -> Close {
        let config = &self.shared.config;
        let hello = ServerMessage::Hello {
            version: VERSION,
            max_segment_bytes: config.max_segment_bytes as u64,
            credit_window: config.credit_window,
            max_streams: config.max_streams,
            max_message_bytes: config.max_message_bytes as u64,
        };
        if self.send(&hello).await.is_err() {
            return Close::Gone;
        }
        let (ping_every, idle_after) = (config.ping_interval, config.idle_timeout);
        let mut ping = tokio::time::interval(ping_every);
        let mut last_request = Instant::now();
        loop {
            tokio::select! {
                msg = socket.next() => {
                    let msg = match msg {
                        None => return Close::Gone,
                        // Read errors include messages over the size limit.
                        Some(Err(e)) => return Close::Transport(e.to_string()),
                        Some(Ok(msg)) => msg,
                    };
                    let now = Instant::now();
                    *heard.lock().unwrap_or_else(|e| e.into_inner()) = now;
                    let handled = match msg {
                        Message::Text(text) => {
                            last_request = now;
                            self.on_control(text.as_str()).await
                        }
                        Message::Binary(bytes) => {
                            last_request = now;
                            self.on_frame(bytes)
                        }
                        Message::Close(_) => return Close::Gone,
                        Message::Ping(_) | Message::Pong(_) => Ok(()),
                    };
                    if let Err(close) = handled {
                        return close;
                    }
                }
                Some((stream, result)) = done.recv() => {
                    if self.streams.remove(&stream).is_some() {
                        let status = result.err().unwrap_or_else(|| Status::ok(""));
                        if self.send(&status_message(stream, &status)).await.is_err() {
                            return Close::Gone;
                        }
                    }
                }
                _ = ping.tick() => {
                    if self.streams.is_empty() && last_request.elapsed() >= idle_after {
                        return Close::Idle("idle timeout");
                    }
                    // A full queue means the client is not reading: no ping can reach
                    // it then, and `watchdog` will end the connection.
                    if let Err(mpsc::error::TrySendError::Closed(_)) =
                        self.out.try_send(Message::Ping(Bytes::new()))
                    {
                        return Close::Gone;
                    }
                }
            }
        }
    }

    async fn send(&self, msg: &ServerMessage) -> Result<(), Close> {
        send_json(&self.out, msg).await.map_err(|_| Close::Gone)
    }

    async fn on_control(&mut self, text: &str) -> Result<(), Close> {
        match ClientMessage::from_json(text)? {
            ClientMessage::Auth { token } => self.token = Some(token),
            ClientMessage::Credit { stream, bytes } => match self.streams.get(&stream) {
                Some(Entry {
                    kind: Kind::Get(credit),
                    ..
                }) => credit.grant(bytes)?,
                Some(_) => return Err(ProtocolError::NotDownload(stream).into()),
                None => self.ids.check_finished(stream)?,
            },
            ClientMessage::Cancel { stream } => match self.streams.remove(&stream) {
                Some(entry) => {
                    entry.task.abort();
                    // Wait for the abort to land, so that no frame of the stream can
                    // follow its status.
                    let _ = entry.task.await;
                    let status = Status::cancelled("cancelled by the client");
                    self.send(&status_message(stream, &status)).await?;
                }
                None => self.ids.check_finished(stream)?,
            },
            ClientMessage::End { stream } => match self.streams.get_mut(&stream) {
                Some(Entry {
                    kind: Kind::Put { end, .. },
                    ..
                }) => match end.take() {
                    Some(room) => {
                        room.send(Upload::End);
                    }
                    None => return Err(ProtocolError::AfterEnd(stream).into()),
                },
                Some(_) => return Err(ProtocolError::NotUpload(stream).into()),
                None => self.ids.check_finished(stream)?,
            },
            request => self.open(request).await?,
        }
        Ok(())
    }

    /// Starts the stream a request names, or answers it with an error status.
    async fn open(&mut self, request: ClientMessage) -> Result<(), Close> {
        let stream = request.stream().unwrap_or_default();
        self.ids.open(stream)?;
        let config = &self.shared.config;
        let refusal = if config.token.is_some() && self.token != config.token {
            Some(Status::unauthenticated(
                "missing or wrong bearer token (send an auth message)",
            ))
        } else if self.streams.len() >= config.max_streams as usize {
            Some(Status::resource_exhausted(format!(
                "at most {} concurrent streams per connection",
                config.max_streams
            )))
        } else {
            None
        };
        if let Some(status) = refusal {
            return self.send(&status_message(stream, &status)).await;
        }
        let location = match &request {
            ClientMessage::DoGet { location, .. } => location.as_deref(),
            _ => None,
        };
        let client = match self.shared.upstreams.client(&mut self.pool, location) {
            Ok(c) => c,
            Err(status) => return self.send(&status_message(stream, &status)).await,
        };
        let (token, out) = (self.token.clone(), self.out.clone());
        match request {
            ClientMessage::DoGet { ticket, credit, .. } => {
                let window = credit.unwrap_or(config.credit_window);
                let credit = Arc::new(SharedCredit::new(window)?);
                let task = DoGet {
                    stream,
                    client,
                    ticket,
                    token,
                    credit: credit.clone(),
                    window,
                    out,
                    max_segment: config.max_segment_bytes,
                };
                self.spawn(stream, Kind::Get(credit), task.run());
            }
            ClientMessage::DoPut { descriptor, .. } => {
                let window = config.credit_window;
                let credit = Arc::new(Mutex::new(Credit::new(window)?));
                let (uploads, rx) = mpsc::channel(queued_frames(window) + 1);
                let end = uploads.clone().try_reserve_owned().ok();
                let task = DoPut {
                    stream,
                    client,
                    descriptor: descriptor_to_proto(descriptor),
                    token,
                    uploads: rx,
                    credit: credit.clone(),
                    out,
                    max_message: config.max_message_bytes,
                };
                let kind = Kind::Put {
                    uploads,
                    end,
                    credit,
                };
                self.spawn(stream, kind, task.run());
                self.send(&ServerMessage::Credit {
                    stream,
                    bytes: window,
                })
                .await?;
            }
            call => self.spawn(stream, Kind::Call, calls::run(call, client, token, out)),
        }
        Ok(())
    }

    fn spawn(
        &mut self,
        stream: u32,
        kind: Kind,
        call: impl Future<Output = Result<(), Status>> + Send + 'static,
    ) {
        let done = self.done_tx.clone();
        let task = tokio::spawn(async move {
            let result = call.await;
            let _ = done.send((stream, result));
        });
        self.streams.insert(stream, Entry { task, kind });
    }

    /// Routes a DoPut frame to its task, charging the stream's credit.
    fn on_frame(&mut self, bytes: Bytes) -> Result<(), Close> {
        let frame = Frame::decode(&bytes, self.shared.config.max_segment_bytes)?;
        let stream = frame.stream;
        let Some(entry) = self.streams.get(&stream) else {
            // Frames that raced the end of their stream are dropped.
            return Ok(self.ids.check_finished(stream)?);
        };
        let Kind::Put {
            uploads,
            end,
            credit,
        } = &entry.kind
        else {
            return Err(ProtocolError::NotUpload(stream).into());
        };
        if end.is_none() {
            return Err(ProtocolError::AfterEnd(stream).into());
        }
        credit
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .spend(frame.payload_len())?;
        let meta_end = HEADER_LEN + frame.app_metadata.len();
        let upload = match frame.kind {
            FrameKind::Metadata => Upload::Metadata(bytes.slice(HEADER_LEN..meta_end)),
            FrameKind::Data => Upload::Data {
                first: frame.flags.first,
                last: frame.flags.last,
                app_metadata: bytes.slice(HEADER_LEN..meta_end),
                ipc: bytes.slice(meta_end..),
            },
        };
        // Closed: the upload task has ended, and its status is on its way.
        if let Err(mpsc::error::TrySendError::Full(_)) = uploads.try_send(upload) {
            let limit = uploads.max_capacity() - 1;
            return Err(ProtocolError::TooManyFrames { stream, limit }.into());
        }
        Ok(())
    }
}

/// How many frames of one DoPut may wait for the upstream: one per 256 bytes of the
/// window, within 64..=65536. Credit bounds their bytes, this their count.
fn queued_frames(window: u64) -> usize {
    (window / 256).clamp(64, 1 << 16) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_reasons_fit_a_control_frame() {
        assert_eq!(truncate("abc", 120), "abc");
        let long = "é".repeat(100);
        let cut = truncate(&long, 120);
        assert!(cut.len() <= 120 && cut.chars().all(|c| c == 'é'));
    }
}
