//! DoPut: the client sends an IPC stream in frames; the gateway cuts it back into
//! messages and sends each as a `FlightData`. The client may only send what the gateway
//! granted, and the gateway grants a frame's bytes back once the messages it completed
//! were taken by the upstream call, so a slow upstream slows the client at message
//! boundaries. Within a message the bytes are granted back at once (its body is already
//! allocated at its declared size), so credit does not bound a message still arriving:
//! `--max-message-bytes` does (docs/reliability.md). Every message counts against the
//! budget until the call lets go of it, and one that finds no room waits for those.
//!
//! The upstream call's request stream ends cleanly only after the client's `end`. An
//! upload that stops any other way (bad bytes, a cancel, the client gone) must reach the
//! server as a reset call, never as a shorter complete one that it would store: the
//! stream then yields an item that [`UploadCodec`] refuses to encode, and a request body
//! that fails makes hyper reset the HTTP/2 stream.

use std::future::Future;
use std::sync::{Arc, Mutex};

use arrow_flight::{FlightData, FlightDescriptor, PutResult};
use bytes::Bytes;
use futures::Stream;
use quiver::flight::control::{Descriptor, ServerMessage};
use quiver::flight::credit::Credit;
use quiver::flight::message::Splitter;
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tonic::codec::{BufferSettings, Codec, EncodeBuf, Encoder};
use tonic::codegen::http::uri::PathAndQuery;
use tonic::Status;
use tonic_prost::{ProstDecoder, ProstEncoder};

use crate::budget::{Account, Held};
use crate::convert::descriptor_to_proto;
use crate::out::Out;
use crate::sql::command::{Command, PutAnswer};
use crate::upstream::{request, CallMetadata, Client};

const DO_PUT: &str = "/arrow.flight.protocol.FlightService/DoPut";
/// More than the messages that can be on their way to the call at once (two queued, one
/// being sent, one being handed on).
const IN_FLIGHT: u32 = 8;

/// What the connection passes to a DoPut task.
pub(crate) enum Upload {
    /// A data frame's pieces, sliced from the received WebSocket message.
    Data {
        first: bool,
        last: bool,
        app_metadata: Bytes,
        ipc: Bytes,
    },
    /// A metadata frame: a `FlightData` with only `app_metadata`.
    Metadata(Bytes),
    /// The client's `end` message.
    End,
}

impl Upload {
    fn payload_len(&self) -> usize {
        match self {
            Upload::Data {
                app_metadata, ipc, ..
            } => app_metadata.len() + ipc.len(),
            Upload::Metadata(m) => m.len(),
            Upload::End => 0,
        }
    }
}

pub(crate) struct DoPut {
    pub stream: u32,
    pub client: Client,
    pub descriptor: Descriptor,
    pub metadata: CallMetadata,
    pub uploads: mpsc::Receiver<Upload>,
    pub credit: Arc<Mutex<Credit>>,
    pub out: Out,
    pub account: Arc<Account>,
    pub max_message: usize,
}

impl DoPut {
    pub async fn run(self) -> Result<(), Status> {
        let DoPut {
            stream,
            client,
            descriptor,
            metadata,
            uploads,
            credit,
            out,
            account,
            max_message,
        } = self;
        let (descriptor, answer) = match descriptor {
            Descriptor::Sql(json) => {
                let command = Command::from_json(&json)?;
                let cmd = FlightDescriptor::new_cmd(command.to_cmd()?);
                (cmd, command.put_answer())
            }
            other => (descriptor_to_proto(other)?, PutAnswer::Opaque),
        };
        let (tx, rx) = mpsc::channel::<Outgoing>(2);
        let req = request(upload_stream(rx), &metadata)?;
        let results_out = out.clone();
        let call = async move {
            let mut grpc = client.grpc();
            grpc.ready()
                .await
                .map_err(|e| Status::unavailable(format!("upstream not ready: {e}")))?;
            let path = PathAndQuery::from_static(DO_PUT);
            let mut results = grpc.streaming(req, path, UploadCodec).await?.into_inner();
            while let Some(r) = results.message().await? {
                let msg = ServerMessage::PutResult {
                    stream,
                    app_metadata: answer.to_browser(&r.app_metadata)?,
                };
                results_out.send_answer(&msg, "a PutResult").await?;
            }
            Ok::<(), Status>(())
        };
        let feed = Feed {
            stream,
            descriptor: Some(descriptor),
            splitter: Splitter::new(max_message),
            assembling: account.hold(0),
            in_flight: Arc::new(Semaphore::new(IN_FLIGHT as usize)),
            account,
            app_metadata: Bytes::new(),
            tx,
            credit,
            out,
        }
        .run(uploads);
        call_result(call, feed).await
    }
}

/// The DoPut's result: the upstream call's, unless the feed failed first. A feed that
/// stops because the call dropped its request stream waits for the call's own status.
async fn call_result(
    call: impl Future<Output = Result<(), Status>>,
    feed: impl Future<Output = Result<(), FeedStop>>,
) -> Result<(), Status> {
    tokio::pin!(call, feed);
    let mut fed = false;
    loop {
        tokio::select! {
            r = &mut call => return r,
            r = &mut feed, if !fed => match r {
                Err(FeedStop::Failed(status)) => return Err(status),
                Ok(()) | Err(FeedStop::UpstreamGone) => fed = true,
            }
        }
    }
}

struct Feed {
    stream: u32,
    descriptor: Option<FlightDescriptor>,
    splitter: Splitter,
    /// The budget held by the messages not yet forwarded; the one in progress counts at
    /// its declared size, as it is allocated.
    assembling: Held,
    /// A permit for each message handed to the call and not yet let go ([`Sending`]).
    in_flight: Arc<Semaphore>,
    /// Told when the upload waits on its client, and what the client sends.
    account: Arc<Account>,
    /// `app_metadata` of the message in progress.
    app_metadata: Bytes,
    tx: mpsc::Sender<Outgoing>,
    credit: Arc<Mutex<Credit>>,
    out: Out,
}

impl Feed {
    /// Returns when the client ends the upload, after ending the request stream.
    async fn run(mut self, mut uploads: mpsc::Receiver<Upload>) -> Result<(), FeedStop> {
        let invalid = |e: quiver::flight::ProtocolError| Status::invalid_argument(e.to_string());
        let mut messages = Vec::new();
        loop {
            // Waiting for the client's next frame: an upload it leaves idle holds its credit
            // window while it waits (see `budget`).
            let next = {
                let _waiting = self.account.wait_on_client();
                uploads.recv().await
            };
            let Some(upload) = next else {
                break;
            };
            let size = upload.payload_len();
            self.account.moved(size as u64);
            match upload {
                Upload::End => {
                    self.splitter.finish().map_err(invalid)?;
                    if self.descriptor.is_some() {
                        // An upload of nothing (a Flight SQL update) still names its
                        // descriptor, in a message without data.
                        let none = self.assembling.split_off(0);
                        self.send(Bytes::new(), Bytes::new(), Bytes::new(), none)
                            .await?;
                    }
                    return self.forward(Outgoing::End).await;
                }
                Upload::Metadata(app_metadata) => {
                    self.splitter.check_first(true).map_err(invalid)?;
                    let none = self.assembling.split_off(0);
                    self.send(Bytes::new(), Bytes::new(), app_metadata, none)
                        .await?;
                }
                Upload::Data {
                    first,
                    last,
                    app_metadata,
                    ipc,
                } => {
                    self.splitter.check_first(first).map_err(invalid)?;
                    if first {
                        // It belongs to the message this frame starts, which is the next
                        // to complete, perhaps in a later frame.
                        self.app_metadata = app_metadata;
                    }
                    self.splitter.push(&ipc, &mut messages).map_err(invalid)?;
                    self.splitter.check_last(last).map_err(invalid)?;
                    if last && messages.is_empty() && !self.app_metadata.is_empty() {
                        // Its bytes were an end-of-stream marker: nothing to send it with.
                        return Err(Status::invalid_argument(format!(
                            "app_metadata of {} bytes came with IPC bytes that complete no \
                             message",
                            self.app_metadata.len()
                        ))
                        .into());
                    }
                    // Messages completed and the one in progress, until forwarded.
                    let held = self.splitter.allocated()
                        + messages
                            .iter()
                            .map(|m| m.header.len() + m.body.len())
                            .sum::<usize>();
                    self.hold_assembling(held as u64).await?;
                    for m in messages.drain(..) {
                        let meta = std::mem::take(&mut self.app_metadata);
                        let size = m.header.len() + m.body.len();
                        let held = self.assembling.split_off(size as u64);
                        self.send(m.header.into(), m.body.into(), meta, held)
                            .await?;
                    }
                }
            }
            self.grant(size).await?;
        }
        Err(Status::cancelled("client connection closed during DoPut").into())
    }

    /// Holds `bytes` for the messages being assembled. Past a budget, first waits for the
    /// call to let go of the messages handed to it, which give their bytes back.
    async fn hold_assembling(&mut self, bytes: u64) -> Result<(), Status> {
        const WHAT: &str = "a DoPut's message";
        if self.assembling.reserve_to(bytes, WHAT).is_ok() {
            return Ok(());
        }
        // Allocated already: the message counts while it waits.
        self.assembling.shrink_to(0);
        let waiting = self.account.hold(bytes);
        drop(self.in_flight.acquire_many(IN_FLIGHT).await);
        drop(waiting);
        self.assembling.reserve_to(bytes, WHAT)
    }

    async fn send(
        &mut self,
        header: Bytes,
        body: Bytes,
        app_metadata: Bytes,
        held: Held,
    ) -> Result<(), FeedStop> {
        let data = FlightData {
            flight_descriptor: self.descriptor.take(),
            data_header: header,
            data_body: body,
            app_metadata,
        };
        let permit = Arc::clone(&self.in_flight)
            .acquire_owned()
            .await
            .map_err(|_| Status::internal("the DoPut's in-flight count was closed"))?;
        let sending = Sending {
            _held: held,
            _permit: permit,
        };
        self.forward(Outgoing::Data(data, sending)).await
    }

    async fn forward(&self, item: Outgoing) -> Result<(), FeedStop> {
        self.tx.send(item).await.map_err(|_| FeedStop::UpstreamGone)
    }

    async fn grant(&self, bytes: usize) -> Result<(), Status> {
        if bytes == 0 {
            return Ok(());
        }
        self.credit
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .grant(bytes as u64)
            .map_err(|e| Status::internal(e.to_string()))?;
        let msg = ServerMessage::Credit {
            stream: self.stream,
            bytes: bytes as u64,
        };
        self.out.send_json(&msg).await
    }
}

/// Why the feed stopped before the client's `end` was forwarded.
enum FeedStop {
    /// The upload failed: this is the call's status.
    Failed(Status),
    /// The upstream call dropped its request stream, as a server that answers before
    /// reading the whole upload does: the call's own result is the one to report.
    UpstreamGone,
}

impl From<Status> for FeedStop {
    fn from(status: Status) -> Self {
        FeedStop::Failed(status)
    }
}

/// What the feed hands the upstream call.
enum Outgoing {
    Data(FlightData, Sending),
    /// The client's `end`: the request stream may end.
    End,
}

/// A message's budget and in-flight permit, held until the call lets go of the message.
struct Sending {
    _held: Held,
    _permit: OwnedSemaphorePermit,
}

/// The request stream: each `FlightData` as `Some`, ended by `Outgoing::End`. If the feed
/// is gone without it, one `None` first, which fails the request body.
fn upload_stream(rx: mpsc::Receiver<Outgoing>) -> impl Stream<Item = Option<FlightData>> {
    futures::stream::unfold(Some((rx, None)), |state| async move {
        let (mut rx, sent): (_, Option<Sending>) = state?;
        // The call asks for the next message once hyper has taken the last one's bytes
        // (it waits for HTTP/2 window first): only then are they given back.
        drop(sent);
        match rx.recv().await {
            Some(Outgoing::Data(data, sending)) => Some((Some(data), Some((rx, Some(sending))))),
            Some(Outgoing::End) => None,
            None => Some((None, None)),
        }
    })
}

/// Flight's protobuf codec, with `None` as an upload's abort signal (module docs).
struct UploadCodec;

impl Codec for UploadCodec {
    type Encode = Option<FlightData>;
    type Decode = PutResult;
    type Encoder = UploadEncoder;
    type Decoder = ProstDecoder<PutResult>;

    fn encoder(&mut self) -> UploadEncoder {
        UploadEncoder(ProstEncoder::new(BufferSettings::default()))
    }

    fn decoder(&mut self) -> ProstDecoder<PutResult> {
        ProstDecoder::new(BufferSettings::default())
    }
}

struct UploadEncoder(ProstEncoder<FlightData>);

impl Encoder for UploadEncoder {
    type Item = Option<FlightData>;
    type Error = Status;

    fn encode(&mut self, item: Self::Item, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        match item {
            Some(data) => self.0.encode(data, dst),
            None => Err(Status::cancelled(
                "the client's upload stopped before its end",
            )),
        }
    }

    fn buffer_settings(&self) -> BufferSettings {
        self.0.buffer_settings()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_feed_cut_off_by_the_upstream_reports_the_calls_status() {
        let call = async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            Err(Status::unimplemented("Implement do_put_statement_update"))
        };
        let feed = async { Err(FeedStop::UpstreamGone) };
        let status = call_result(call, feed).await.unwrap_err();
        assert_eq!(status.code(), tonic::Code::Unimplemented);
        assert_eq!(status.message(), "Implement do_put_statement_update");
    }

    #[tokio::test]
    async fn a_failed_feed_ends_the_call_with_its_status() {
        let call = std::future::pending();
        let feed = async { Err(FeedStop::Failed(Status::invalid_argument("bad frame"))) };
        let status = call_result(call, feed).await.unwrap_err();
        assert_eq!(status.code(), tonic::Code::InvalidArgument);
    }
}
