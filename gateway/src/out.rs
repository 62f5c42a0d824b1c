//! The connection's outgoing queue: every task sends its frames and JSON messages through
//! one bounded channel to the socket writer, so a slow socket pauses them all.

use axum::extract::ws::Message;
use quiver::flight::control::ServerMessage;
use tokio::sync::mpsc;
use tonic::Status;

/// Queues a control message; fails when the connection is gone.
pub(crate) async fn send_json(
    out: &mpsc::Sender<Message>,
    msg: &ServerMessage,
) -> Result<(), Status> {
    let text = msg.to_json().map_err(|e| Status::internal(e.to_string()))?;
    out.send(Message::Text(text.into()))
        .await
        .map_err(|_| Status::cancelled("client connection closed"))
}
