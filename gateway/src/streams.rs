//! One connection's streams: the table of open streams, and what each client message does
//! to it (open a call, grant credit, cancel, end an upload, route a DoPut frame). Every
//! call runs as its own task, which reports its result to the connection when it ends.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};

use axum::http::HeaderMap;
use bytes::Bytes;
use quiver::flight::control::{ClientMessage, ServerMessage};
use quiver::flight::credit::Credit;
use quiver::flight::frame::{Frame, FrameKind, HEADER_LEN};
use quiver::flight::streams::StreamIds;
use quiver::flight::ProtocolError;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tonic::Status;

use crate::budget::MIN_STREAM_WINDOW;
use crate::budget::{Account, Held};
use crate::convert::status_message;
use crate::credit::SharedCredit;
use crate::doget::DoGet;
use crate::doput::{DoPut, Upload};
use crate::out::Out;
use crate::shared::Shared;
use crate::status::naming_location;
use crate::token::is_service_token;
use crate::upstream::{stream_window, CallMetadata, Pool};
use crate::{auth, calls};

/// A stream's end: its id and the call's result.
pub(crate) type Finished = (u32, Result<(), Status>);

/// Why handling a message ends the connection.
pub(crate) enum Stop {
    /// The socket's queue is closed: the writer, and so the client, is gone.
    Gone,
    Protocol(ProtocolError),
}

impl From<ProtocolError> for Stop {
    fn from(e: ProtocolError) -> Self {
        Stop::Protocol(e)
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
    /// A basic-auth exchange, and the bearer token it gets: the connection's token once
    /// its status is sent, so that the calls the client opens after it carry the token.
    Login(Arc<OnceLock<String>>),
}

struct Entry {
    task: JoinHandle<()>,
    kind: Kind,
}

pub(crate) struct Streams {
    shared: Arc<Shared>,
    out: Out,
    account: Arc<Account>,
    metadata: CallMetadata,
    table: HashMap<u32, Entry>,
    ids: StreamIds,
    pool: Pool,
    done: mpsc::UnboundedSender<Finished>,
}

impl Streams {
    /// The streams of a connection whose messages go to `out`, whose bytes are charged
    /// to `account` and whose upstream calls carry `forwarded`; each call's end is sent
    /// to `done`.
    pub fn new(
        shared: Arc<Shared>,
        out: Out,
        account: Arc<Account>,
        forwarded: HeaderMap,
        done: mpsc::UnboundedSender<Finished>,
    ) -> Self {
        Streams {
            shared,
            out,
            account,
            metadata: CallMetadata {
                forwarded,
                token: None,
            },
            table: HashMap::new(),
            ids: StreamIds::default(),
            pool: Pool::default(),
            done,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Aborts every call; dropping an upstream call cancels it on the server.
    pub fn abort_all(&mut self) {
        for (_, entry) in self.table.drain() {
            entry.task.abort();
        }
    }

    /// Sends the terminal status of a call that ended, unless it was cancelled first.
    pub async fn finish(&mut self, (stream, result): Finished) -> Result<(), Stop> {
        if let Some(entry) = self.table.remove(&stream) {
            if let (Kind::Login(issued), Ok(())) = (&entry.kind, &result) {
                self.metadata.token = issued.get().cloned();
            }
            let status = result.err().unwrap_or_else(|| Status::ok(""));
            self.send(&status_message(stream, &status)).await?;
        }
        Ok(())
    }

    async fn send(&self, msg: &ServerMessage) -> Result<(), Stop> {
        self.out.send_json(msg).await.map_err(|_| Stop::Gone)
    }

    pub async fn on_control(&mut self, text: &str) -> Result<(), Stop> {
        match ClientMessage::from_json(text)? {
            ClientMessage::Auth { token } => {
                self.metadata.token = Some(token);
                // It replaces the token of a basic-auth exchange still running, too.
                for entry in self.table.values_mut() {
                    if matches!(entry.kind, Kind::Login(_)) {
                        entry.kind = Kind::Call;
                    }
                }
            }
            ClientMessage::Credit { stream, bytes } => match self.table.get(&stream) {
                Some(Entry {
                    kind: Kind::Get(credit),
                    ..
                }) => {
                    credit.grant(bytes)?;
                    self.account.moved(bytes);
                }
                Some(_) => return Err(ProtocolError::NotDownload(stream).into()),
                None => self.ids.check_finished(stream)?,
            },
            ClientMessage::Cancel { stream } => match self.table.get_mut(&stream) {
                Some(entry) => {
                    entry.task.abort();
                    // Wait for the abort to land, so that no frame of the stream can
                    // follow its status. A call that ended first sent its own result,
                    // which `finish` passes on.
                    if (&mut entry.task).await.is_err() {
                        self.table.remove(&stream);
                        let status = Status::cancelled("cancelled by the client");
                        self.send(&status_message(stream, &status)).await?;
                    }
                }
                None => self.ids.check_finished(stream)?,
            },
            ClientMessage::End { stream } => match self.table.get_mut(&stream) {
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
    async fn open(&mut self, request: ClientMessage) -> Result<(), Stop> {
        let stream = request.stream().unwrap_or_default();
        self.ids.open(stream)?;
        let config = &self.shared.config;
        let basic_auth = matches!(request, ClientMessage::BasicAuth { .. });
        let refusal = if basic_auth && config.token.is_some() {
            Some(Status::failed_precondition(
                "this gateway holds the service credential (--token): connect with its \
                 token, not a username and password",
            ))
        } else if config
            .token
            .as_deref()
            .is_some_and(|expected| !is_service_token(self.metadata.token.as_deref(), expected))
        {
            Some(Status::unauthenticated(
                "missing or wrong bearer token (send an auth message)",
            ))
        } else if self.table.len() >= config.max_streams as usize {
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
        // Every call reserves its HTTP/2 stream window in the budget: what its upstream
        // may send before the gateway reads. A DoPut also reserves the credit it grants.
        let (location, http2_window, reserved, what) = match &request {
            ClientMessage::DoGet {
                location, credit, ..
            } => {
                let window = stream_window(credit.unwrap_or(config.credit_window));
                (location.as_deref(), window, window.into(), "a DoGet")
            }
            ClientMessage::DoPut { .. } => (
                None,
                MIN_STREAM_WINDOW,
                u64::from(MIN_STREAM_WINDOW) + config.credit_window,
                "a DoPut",
            ),
            _ => (None, MIN_STREAM_WINDOW, MIN_STREAM_WINDOW.into(), "a call"),
        };
        let opened = self.account.reserve(reserved, what).and_then(|held| {
            let upstreams = &self.shared.upstreams;
            let client = upstreams.client(&mut self.pool, location, http2_window)?;
            Ok((held, client))
        });
        let (held, client) = match opened {
            Ok(opened) => opened,
            Err(status) => return self.send(&status_message(stream, &status)).await,
        };
        let (metadata, out) = (self.metadata.clone(), self.out.clone());
        let location = client.location().to_owned();
        match request {
            ClientMessage::DoGet { ticket, credit, .. } => {
                let window = credit.unwrap_or(config.credit_window);
                let credit = Arc::new(SharedCredit::new(window)?);
                let task = DoGet {
                    stream,
                    client,
                    ticket,
                    metadata,
                    credit: credit.clone(),
                    window,
                    out,
                    account: self.account.clone(),
                    max_segment: config.max_segment_bytes,
                };
                self.spawn(stream, Kind::Get(credit), held, location, task.run());
            }
            ClientMessage::DoPut { descriptor, .. } => {
                let window = config.credit_window;
                let credit = Arc::new(Mutex::new(Credit::new(window)?));
                let (uploads, rx) = mpsc::channel(queued_frames(window) + 1);
                let end = uploads.clone().try_reserve_owned().ok();
                let task = DoPut {
                    stream,
                    client,
                    descriptor,
                    metadata,
                    uploads: rx,
                    credit: credit.clone(),
                    out,
                    account: self.account.clone(),
                    max_message: config.max_message_bytes,
                };
                let kind = Kind::Put {
                    uploads,
                    end,
                    credit,
                };
                self.spawn(stream, kind, held, location, task.run());
                self.send(&ServerMessage::Credit {
                    stream,
                    bytes: window,
                })
                .await?;
            }
            ClientMessage::BasicAuth {
                username, password, ..
            } => {
                let issued = Arc::new(OnceLock::new());
                let task = auth::basic(
                    client,
                    metadata.forwarded,
                    username,
                    password,
                    Arc::clone(&issued),
                );
                self.spawn(stream, Kind::Login(issued), held, location, task);
            }
            call => {
                let task = calls::run(call, client, metadata, out);
                self.spawn(stream, Kind::Call, held, location, task);
            }
        }
        Ok(())
    }

    /// Runs `call` to `location` as the task of `stream`, holding `reserved` until it
    /// ends.
    fn spawn(
        &mut self,
        stream: u32,
        kind: Kind,
        reserved: Held,
        location: String,
        call: impl Future<Output = Result<(), Status>> + Send + 'static,
    ) {
        let done = self.done.clone();
        let task = tokio::spawn(async move {
            let result = call.await.map_err(|s| naming_location(s, &location));
            drop(reserved);
            let _ = done.send((stream, result));
        });
        self.table.insert(stream, Entry { task, kind });
    }

    /// Routes a DoPut frame to its task, charging the stream's credit.
    pub fn on_frame(&mut self, bytes: Bytes) -> Result<(), Stop> {
        let frame = Frame::decode(&bytes, self.shared.config.max_segment_bytes)?;
        let stream = frame.stream;
        let Some(entry) = self.table.get(&stream) else {
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
        // A slice would keep the socket's whole read buffer, grown perhaps by a larger
        // message since, alive and uncounted while the frame waits: the frame gets its own.
        let bytes = Bytes::copy_from_slice(&bytes);
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
