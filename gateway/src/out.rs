//! The connection's outgoing queue: every task sends its frames and JSON messages through
//! one bounded channel to the socket writer, so a slow socket pauses them all. Each
//! message's bytes are charged to the connection's budget until the writer has written
//! it: a DoGet's frames and a call's answers are refused past a budget; the small control
//! messages (hello, credit, status) are not.

use std::sync::Arc;

use axum::extract::ws::Message;
use quiver::flight::control::ServerMessage;
use tokio::sync::mpsc;
use tonic::Status;

use crate::budget::{Account, Held};

/// The sending side of a connection's queue.
#[derive(Clone)]
pub(crate) struct Out {
    tx: mpsc::Sender<Queued>,
    account: Arc<Account>,
}

/// A message on its way to the socket, and the budget its bytes hold until written.
pub(crate) struct Queued {
    pub message: Message,
    pub held: Held,
}

impl Out {
    /// A queue of `capacity` messages whose bytes are charged to `account`.
    pub fn new(capacity: usize, account: Arc<Account>) -> (Out, mpsc::Receiver<Queued>) {
        let (tx, rx) = mpsc::channel(capacity);
        (Out { tx, account }, rx)
    }

    /// Queues `message`, waiting for room; fails when the connection is gone.
    pub async fn send(&self, message: Message) -> Result<(), Status> {
        let held = self.account.hold(len(&message));
        self.queue(Queued { message, held }).await
    }

    /// Queues a DoGet frame if a budget has room for it, waiting for room in the queue.
    pub async fn send_frame(&self, frame: Vec<u8>) -> Result<(), Status> {
        let held = self
            .account
            .reserve(frame.len() as u64, "a DoGet's frame")?;
        let message = Message::Binary(frame.into());
        self.queue(Queued { message, held }).await
    }

    async fn queue(&self, queued: Queued) -> Result<(), Status> {
        self.tx
            .send(queued)
            .await
            .map_err(|_| Status::cancelled("client connection closed"))
    }

    /// Queues `message` if there is room now.
    pub fn try_send(&self, message: Message) -> Result<(), mpsc::error::TrySendError<Queued>> {
        let held = self.account.hold(len(&message));
        self.tx.try_send(Queued { message, held })
    }

    /// Queues a control message; fails when the connection is gone.
    pub async fn send_json(&self, msg: &ServerMessage) -> Result<(), Status> {
        let text = msg.to_json().map_err(|e| Status::internal(e.to_string()))?;
        self.send(Message::Text(text.into())).await
    }

    /// Queues `what`, an upstream's answer (a FlightInfo, an action's result, a
    /// PutResult), as large as an upstream message may be, if a budget has room for it.
    pub async fn send_answer(&self, msg: &ServerMessage, what: &str) -> Result<(), Status> {
        let text = msg.to_json().map_err(|e| Status::internal(e.to_string()))?;
        let held = self.account.reserve(text.len() as u64, what)?;
        let message = Message::Text(text.into());
        self.queue(Queued { message, held }).await
    }

    /// Whether messages wait in the queue.
    pub fn is_waiting(&self) -> bool {
        self.tx.capacity() < self.tx.max_capacity()
    }
}

fn len(message: &Message) -> u64 {
    let bytes = match message {
        Message::Binary(b) => b.len(),
        Message::Text(t) => t.len(),
        _ => 0,
    };
    bytes as u64
}
