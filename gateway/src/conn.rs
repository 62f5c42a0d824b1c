//! One WebSocket connection's lifecycle: the hello, reading client messages (handed to
//! [`Streams`]), keepalive pings, the socket's write loop, and closing idle, stalled or
//! misbehaving connections. A protocol error closes only this connection, with close code
//! 1002.

use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::ws::{CloseFrame, Message, WebSocket};
use axum::http::HeaderMap;
use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use quiver::flight::control::ServerMessage;
use quiver::flight::{ProtocolError, VERSION};
use tokio::sync::mpsc;

use crate::budget::Account;
use crate::budget::MIN_STREAM_WINDOW;
use crate::out::{Out, Queued};
use crate::shared::Shared;
use crate::streams::{Finished, Stop, Streams};
use crate::upstream::stream_window;

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
    /// Holding bytes while a budget is full, and granting no credit (`budget`).
    Stalled(String),
    Protocol(ProtocolError),
    /// The socket failed, e.g. a message over the size limit; the peer may still read.
    Transport(String),
}

impl From<Stop> for Close {
    fn from(stop: Stop) -> Self {
        match stop {
            Stop::Gone => Close::Gone,
            Stop::Protocol(e) => Close::Protocol(e),
        }
    }
}

/// Serves one upgraded socket from `client`, whose upstream calls carry `forwarded`.
pub(crate) async fn run(
    socket: WebSocket,
    shared: Arc<Shared>,
    client: IpAddr,
    forwarded: HeaderMap,
) {
    let (sink, mut stream) = socket.split();
    let account = shared.budget.open(client);
    let (out, out_rx) = Out::new(OUT_QUEUE, account.clone());
    let written = Arc::new(Mutex::new(Instant::now()));
    let writer = tokio::spawn(write_loop(sink, out_rx, written.clone()));
    let (done_tx, done_rx) = mpsc::unbounded_channel();
    let ping_every = shared.config.ping_interval;
    let stall_after = shared.config.stall_timeout;
    // The room a DoGet opened with the default credit reserves: a budget without it
    // refuses the calls clients usually make.
    let call_room = u64::from(stream_window(shared.config.credit_window));
    let mut streams = Streams::new(
        shared.clone(),
        out.clone(),
        account.clone(),
        forwarded,
        done_tx,
    );
    let heard = Mutex::new(Instant::now());
    // The watchdog runs beside `serve`, whose sends wait while the socket's queue is
    // full: a client that stops reading fills it and would otherwise never time out.
    let close = tokio::select! {
        close = serve(&shared, &out, &mut streams, &mut stream, done_rx, &heard) => close,
        close = watchdog(&heard, &written, &out, ping_every) => close,
        close = stall(&account, stall_after, call_room) => close,
    };
    let handshake = !matches!(close, Close::Gone);
    streams.abort_all();
    drop(streams);
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
            // 1008: the client broke the gateway's policy.
            Close::Stalled(reason) => Some(CloseFrame {
                code: 1008,
                reason: truncate(&reason, 120).into(),
            }),
            Close::Protocol(e) => Some(protocol_close(&out, e.to_string()).await),
            Close::Transport(message) => Some(protocol_close(&out, message).await),
        };
        if let Some(frame) = frame {
            let _ = out.send(Message::Close(Some(frame))).await;
        }
    };
    let _ = tokio::time::timeout(grace, goodbye).await;
    drop(out);
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

/// Sends the hello, then hands each client message and each ended call to `streams`,
/// and pings, until the connection should end.
async fn serve(
    shared: &Shared,
    out: &Out,
    streams: &mut Streams,
    socket: &mut futures::stream::SplitStream<WebSocket>,
    mut done: mpsc::UnboundedReceiver<Finished>,
    heard: &Mutex<Instant>,
) -> Close {
    let config = &shared.config;
    let hello = ServerMessage::Hello {
        version: VERSION,
        max_segment_bytes: config.max_segment_bytes as u64,
        credit_window: config.credit_window,
        max_streams: config.max_streams,
        max_message_bytes: config.max_message_bytes as u64,
    };
    if out.send_json(&hello).await.is_err() {
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
                        streams.on_control(text.as_str()).await
                    }
                    Message::Binary(bytes) => {
                        last_request = now;
                        streams.on_frame(bytes)
                    }
                    Message::Close(_) => return Close::Gone,
                    Message::Ping(_) | Message::Pong(_) => Ok(()),
                };
                if let Err(stop) = handled {
                    return stop.into();
                }
            }
            Some(finished) = done.recv() => {
                if let Err(stop) = streams.finish(finished).await {
                    return stop.into();
                }
            }
            _ = ping.tick() => {
                if streams.is_empty() && last_request.elapsed() >= idle_after {
                    return Close::Idle("idle timeout");
                }
                // A full queue means the client is not reading: no ping can reach
                // it then, and `watchdog` will end the connection.
                if let Err(mpsc::error::TrySendError::Closed(_)) =
                    out.try_send(Message::Ping(Bytes::new()))
                {
                    return Close::Gone;
                }
            }
        }
    }
}

/// Resolves once, for `MISSED_PINGS` pings, the peer has sent nothing (not even a pong),
/// or messages have waited for it while none could be written: a client that keeps
/// sending but never reads is closed too.
async fn watchdog(
    heard: &Mutex<Instant>,
    written: &Mutex<Instant>,
    queue: &Out,
    ping_every: Duration,
) -> Close {
    let limit = ping_every * MISSED_PINGS;
    loop {
        let silent = read_instant(heard).elapsed();
        if silent >= limit {
            return Close::Idle("no answer to pings");
        }
        let waiting = queue.is_waiting();
        let stalled = read_instant(written).elapsed();
        if waiting && stalled >= limit {
            return Close::Idle("not reading");
        }
        tokio::time::sleep((limit - silent).min(ping_every)).await;
    }
}

/// Resolves once the connection holds bytes while a budget it shares with other
/// connections has no room for a call that reserves `room`, one of its streams waits on its client (a DoGet for
/// credit, a DoPut for its next frame), and its client has moved less than
/// `MIN_STREAM_WINDOW` bytes in `after`: the client holds memory that others are refused,
/// and is not using it. A grant of a byte now and then, or an idle upload, does not count
/// as using it.
async fn stall(account: &Account, after: Duration, room: u64) -> Close {
    let every = (after / 4).max(Duration::from_millis(100));
    loop {
        tokio::time::sleep(every).await;
        if account.last_progress().elapsed() < after || !account.is_waiting_on_client() {
            continue;
        }
        if let Some((budget, held)) = account.full_shared_budget(room) {
            return Close::Stalled(format!(
                "holds {held} bytes with {budget} full, and moved under {MIN_STREAM_WINDOW} \
                 bytes in {} s",
                after.as_secs()
            ));
        }
    }
}

fn read_instant(at: &Mutex<Instant>) -> Instant {
    *at.lock().unwrap_or_else(|e| e.into_inner())
}

/// Tells the client why its connection ends, and makes the 1002 close frame.
async fn protocol_close(out: &Out, message: String) -> CloseFrame {
    let _ = out
        .send_json(&ServerMessage::Error {
            message: message.clone(),
        })
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
    mut rx: mpsc::Receiver<Queued>,
    written: Arc<Mutex<Instant>>,
) {
    let progress = || *written.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    // Each message's bytes stay charged to the budget until it is written (`queued`
    // drops after the send).
    while let Some(Queued { message, held }) = rx.recv().await {
        progress();
        let closing = matches!(message, Message::Close(_));
        if sink.send(message).await.is_err() || closing {
            break;
        }
        drop(held);
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
