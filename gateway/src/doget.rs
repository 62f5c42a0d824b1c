//! DoGet: forwards each upstream `FlightData` as frames whose IPC bytes, concatenated,
//! form an IPC stream. The gateway writes each message's 8-byte prefix and padding
//! itself and slices the body as it came (`data_body` is `Bytes`), so batches are never
//! re-encoded. The next `FlightData` is polled only after the previous one was sent, and
//! sending waits for credit, so gRPC flow control pushes back on the upstream. The
//! message in hand and the queued frames are charged to the connection's budget; past a
//! budget the call fails with RESOURCE_EXHAUSTED (the message, already received, is then
//! freed), and the client is told why.

use std::sync::Arc;

use arrow_flight::{FlightData, Ticket};
use bytes::Bytes;
use quiver::flight::frame::{self, Flags, FrameKind};
use quiver::flight::message::{body_length, buffers_end, prefix, EOS};
use tonic::Status;

use crate::budget::Account;
use crate::credit::SharedCredit;
use crate::out::Out;
use crate::upstream::{request, CallMetadata, Client};

/// Everything a DoGet task needs.
pub(crate) struct DoGet {
    pub stream: u32,
    pub client: Client,
    pub ticket: Vec<u8>,
    pub metadata: CallMetadata,
    pub credit: Arc<SharedCredit>,
    /// The credit the client opened the stream with: the most it keeps outstanding.
    pub window: u64,
    pub out: Out,
    pub account: Arc<Account>,
    pub max_segment: usize,
}

impl DoGet {
    pub async fn run(self) -> Result<(), Status> {
        let req = request(Ticket::new(self.ticket.clone()), &self.metadata)?;
        let mut upstream = self.client.flight().do_get(req).await?.into_inner();
        let mut in_hand = self.account.hold(0);
        while let Some(data) = upstream.message().await? {
            in_hand.reserve_to(flight_data_len(&data), "a DoGet's upstream message")?;
            self.forward(data).await?;
            in_hand.shrink_to(0);
        }
        let eos = IpcParts {
            head: EOS.to_vec(),
            body: Bytes::new(),
            zeros: 0,
        };
        self.send_message(&[], &eos).await
    }

    async fn forward(&self, data: FlightData) -> Result<(), Status> {
        if data.data_header.is_empty() && !data.data_body.is_empty() {
            return Err(Status::internal(format!(
                "the server sent a FlightData with a body of {} bytes and no IPC header",
                data.data_body.len()
            )));
        }
        if data.data_header.is_empty() {
            // app_metadata alone: one metadata frame.
            let n = data.app_metadata.len();
            if n > self.max_segment {
                return Err(too_large(n, self.max_segment));
            }
            self.check_window(n as u64)?;
            self.take(n, n).await;
            let bytes = frame::encode(
                self.stream,
                FrameKind::Metadata,
                Flags::WHOLE,
                &data.app_metadata,
                &[],
            )
            .map_err(|e| Status::internal(e.to_string()))?;
            return self.send(bytes).await;
        }
        let parts = IpcParts::new(&data)?;
        self.send_message(&data.app_metadata, &parts).await
    }

    /// Sends one IPC message as frames sized to the segment cap and the credit.
    async fn send_message(&self, app_metadata: &[u8], parts: &IpcParts) -> Result<(), Status> {
        let meta = app_metadata.len();
        if meta >= self.max_segment {
            return Err(too_large(meta, self.max_segment));
        }
        if meta > 0 {
            self.check_window(meta as u64 + 1)?;
        }
        let total = parts.len();
        let mut sent = 0;
        while sent < total {
            let first = sent == 0;
            let meta_here = if first { meta } else { 0 };
            let want = (total - sent).min(self.max_segment - meta_here);
            let granted = self.take(meta_here + 1, meta_here + want).await;
            let n = granted - meta_here;
            let mut bytes = Vec::with_capacity(frame::HEADER_LEN + granted);
            let flags = Flags {
                first,
                last: sent + n == total,
            };
            let meta_len =
                u32::try_from(meta_here).map_err(|_| too_large(meta, self.max_segment))?;
            bytes.extend_from_slice(&frame::encode_header(
                self.stream,
                FrameKind::Data,
                flags,
                meta_len,
            ));
            bytes.extend_from_slice(if first { app_metadata } else { &[] });
            parts.copy_range(sent, n, &mut bytes);
            self.send(bytes).await?;
            sent += n;
        }
        Ok(())
    }

    /// A frame of `needed` payload bytes that cannot be split (app_metadata travels
    /// whole, in a first frame with at least one IPC byte) must fit the client's window:
    /// credit beyond it never comes, and waiting for it would hang the stream.
    fn check_window(&self, needed: u64) -> Result<(), Status> {
        if needed <= self.window {
            return Ok(());
        }
        Err(Status::resource_exhausted(format!(
            "a frame of this stream needs {needed} bytes of credit at once (its app_metadata), \
             more than the stream's credit window of {} bytes; ask for at least the \
             gateway's maxSegmentBytes ({})",
            self.window, self.max_segment
        )))
    }

    /// Waits for credit, counted meanwhile as a stream waiting on the client (`budget`).
    async fn take(&self, min: usize, max: usize) -> usize {
        let _waiting = self.account.wait_on_client();
        self.credit.take(min, max).await
    }

    async fn send(&self, bytes: Vec<u8>) -> Result<(), Status> {
        self.out.send_frame(bytes).await
    }
}

/// The bytes of a `FlightData` the gateway holds.
fn flight_data_len(data: &FlightData) -> u64 {
    (data.data_header.len() + data.data_body.len() + data.app_metadata.len()) as u64
}

fn too_large(n: usize, max: usize) -> Status {
    Status::resource_exhausted(format!(
        "app_metadata of {n} bytes does not fit the gateway's {max}-byte segments"
    ))
}

/// One encapsulated IPC message: prefix, header and padding in `head`, then the body
/// slice, then zeros if the upstream's body is shorter than its header declares.
struct IpcParts {
    head: Vec<u8>,
    body: Bytes,
    zeros: usize,
}

impl IpcParts {
    fn new(data: &FlightData) -> Result<Self, Status> {
        let invalid = |e: quiver::flight::ProtocolError| {
            Status::internal(format!("upstream sent an invalid message header: {e}"))
        };
        let header = &data.data_header;
        let (p, pad) = prefix(header.len()).map_err(invalid)?;
        let declared = body_length(header).map_err(invalid)?;
        let used = buffers_end(header).map_err(invalid)?;
        // Some writers leave out the padding after the last buffer, which the decoder
        // needs as many bytes as declared: that may be filled with zeros. Bytes of a
        // buffer may not; that would invent data.
        let received = data.data_body.len() as u64;
        if received < declared && (received < used || declared - received > 64) {
            return Err(Status::internal(format!(
                "upstream message body has {received} bytes, its header declares {declared} \
                 and its buffers end at byte {used}"
            )));
        }
        let declared = declared as usize;
        let mut head = Vec::with_capacity(8 + header.len() + pad);
        head.extend_from_slice(&p);
        head.extend_from_slice(header);
        head.resize(head.len() + pad, 0);
        // Bytes past the declared length are padding the decoder must not see.
        let body = data.data_body.slice(..declared.min(data.data_body.len()));
        let zeros = declared - body.len();
        Ok(IpcParts { head, body, zeros })
    }

    fn len(&self) -> usize {
        self.head.len() + self.body.len() + self.zeros
    }

    /// Appends bytes `start..start + n` of the message to `out`.
    fn copy_range(&self, start: usize, n: usize, out: &mut Vec<u8>) {
        let end = start + n;
        let (h, b) = (self.head.len(), self.head.len() + self.body.len());
        if start < h {
            out.extend_from_slice(&self.head[start..end.min(h)]);
        }
        if end > h && start < b {
            out.extend_from_slice(&self.body[start.max(h) - h..end.min(b) - h]);
        }
        if end > b {
            out.resize(out.len() + (end - start.max(b)), 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int64Array, Int8Array, RecordBatch};
    use quiver::flight::message::Splitter;

    use super::*;

    /// The record batch message of a one-column batch, as FlightData.
    fn message_of(column: ArrayRef) -> FlightData {
        let batch = RecordBatch::try_from_iter([("a", column)]).expect("batch");
        let mut w =
            arrow_ipc::writer::StreamWriter::try_new(Vec::new(), &batch.schema()).expect("writer");
        w.write(&batch).expect("write");
        let ipc = w.into_inner().expect("bytes");
        let mut messages = Vec::new();
        Splitter::new(1 << 20)
            .push(&ipc, &mut messages)
            .expect("split");
        let m = messages.pop().expect("a record batch message");
        FlightData {
            data_header: m.header.into(),
            data_body: m.body.into(),
            ..FlightData::default()
        }
    }

    #[test]
    fn missing_padding_becomes_zeros_but_missing_data_is_an_error() {
        // Three int8 values: a 3-byte buffer, padded (to 64 bytes by arrow-rs).
        let mut data = message_of(Arc::new(Int8Array::from(vec![1, 2, 3])));
        let declared = data.data_body.len();
        data.data_body = data.data_body.slice(..3);
        let parts = IpcParts::new(&data).expect("only padding is missing");
        assert_eq!((parts.body.len(), parts.zeros), (3, declared - 3));
        data.data_body = data.data_body.slice(..2);
        let error = IpcParts::new(&data).err().expect("a value is missing");
        assert_eq!(error.code(), tonic::Code::Internal);
        assert_eq!(
            error.message(),
            format!(
                "upstream message body has 2 bytes, its header declares {declared} and its \
                 buffers end at byte 3"
            )
        );
        // 100 int64 values with the last one cut off: no padding is missing.
        let mut data = message_of(Arc::new(Int64Array::from_iter_values(0..100)));
        data.data_body = data.data_body.slice(..792);
        let error = IpcParts::new(&data)
            .err()
            .expect("the last value is missing");
        assert_eq!(error.code(), tonic::Code::Internal);
    }

    #[test]
    fn copy_range_covers_every_split() {
        let parts = IpcParts {
            head: vec![1, 2, 3],
            body: Bytes::from_static(&[4, 5]),
            zeros: 2,
        };
        let whole = [1, 2, 3, 4, 5, 0, 0];
        assert_eq!(parts.len(), 7);
        for start in 0..7 {
            for n in 0..=(7 - start) {
                let mut out = Vec::new();
                parts.copy_range(start, n, &mut out);
                assert_eq!(out, whole[start..start + n], "{start}+{n}");
            }
        }
    }
}
