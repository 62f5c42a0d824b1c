//! The client's rules, driven by hand: a gateway's messages and frames go in, and the
//! tests read the actions that come out.

use std::sync::Arc;

use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, DictionaryArray, Int32Array, RecordBatch};
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{DataType, Field, Schema};

use super::fetch::{Fetch, FetchPlan};
use super::status::{
    CANCELLED, DATA_LOSS, INTERNAL, PERMISSION_DENIED, RESOURCE_EXHAUSTED, UNAVAILABLE,
};
use super::*;
use crate::flight::control::code_name;
use crate::flight::credit::Credit;
use crate::flight::frame::{self, Flags, FrameKind};
use crate::flight::message::{prefix, Splitter};
use crate::ipc::BatchMetadata;
use crate::TestResult;

const SEGMENT: usize = 64;

fn hello() -> TestResult<String> {
    let hello = ServerMessage::Hello {
        version: VERSION,
        max_segment_bytes: SEGMENT as u64,
        credit_window: 0,
        max_streams: 16,
        max_message_bytes: 1 << 20,
    };
    Ok(hello.to_json()?)
}

fn connect(budget: Rc<Budget>) -> TestResult<Client> {
    let mut client = Client::new(budget, Credentials::None);
    client.on_text(&hello()?);
    assert!(matches!(client.poll_action(), Some(Action::Hello(Ok(())))));
    Ok(client)
}

/// A client given a username and password, after `hello`: what it sent, and whether
/// connect resolved.
fn logging_in() -> TestResult<(Client, Vec<ClientMessage>, bool)> {
    let credentials = Credentials::Basic(BasicAuth {
        username: "ann".into(),
        password: "s3cret".into(),
    });
    let mut client = Client::new(Budget::new(1 << 20), credentials);
    client.on_text(&hello()?);
    let out = actions(&mut client);
    let hello_settled = out.iter().any(|a| matches!(a, Action::Hello(_)));
    Ok((client, sent(&out)?, hello_settled))
}

fn hello_result(actions: &[Action]) -> Option<Result<(), Failure>> {
    actions.iter().find_map(|a| match a {
        Action::Hello(result) => Some(result.clone()),
        _ => None,
    })
}

#[test]
fn connect_waits_for_the_basic_auth_exchange() -> TestResult {
    let (mut client, sent, hello_settled) = logging_in()?;
    assert_eq!(
        sent,
        [ClientMessage::BasicAuth {
            stream: 1,
            username: "ann".into(),
            password: Password("s3cret".into()),
        }]
    );
    assert!(!hello_settled, "connect resolved before the exchange ended");
    status(&mut client, 1, 0, "")?;
    assert_eq!(hello_result(&actions(&mut client)), Some(Ok(())));
    // Calls go on as on any connection, after the exchange's stream.
    assert_eq!(client.call(ClientMessage::ListActions { stream: 0 }), Ok(2));
    Ok(())
}

#[test]
fn a_refused_basic_auth_fails_the_connection() -> TestResult {
    let (mut client, _, _) = logging_in()?;
    status(&mut client, 1, 16, "wrong username or password")?;
    let refused = Failure::new(16, "wrong username or password");
    assert_eq!(
        hello_result(&actions(&mut client)),
        Some(Err(refused.clone()))
    );
    // No call goes out without the token.
    let call = client.call(ClientMessage::ListActions { stream: 0 });
    assert_eq!(call, Err(refused));
    assert!(sent(&actions(&mut client))?.is_empty());
    Ok(())
}

#[test]
fn a_second_hello_during_basic_auth_breaks_the_protocol() -> TestResult {
    let (mut client, _, _) = logging_in()?;
    client.on_text(&hello()?);
    let out = actions(&mut client);
    let Some(Err(failure)) = hello_result(&out) else {
        panic!("connect did not fail: {out:?}");
    };
    assert_eq!(
        failure.message,
        "the gateway broke the protocol: control message is not valid: a second hello"
    );
    assert!(out
        .iter()
        .any(|a| matches!(a, Action::Close { code: 1002, .. })));
    Ok(())
}

#[test]
fn a_token_is_sent_once_hello_arrives_before_connect_resolves() -> TestResult {
    let credentials = Credentials::Token("t0k".into());
    let mut client = Client::new(Budget::new(1 << 20), credentials);
    assert!(actions(&mut client).is_empty(), "nothing goes before hello");
    client.on_text(&hello()?);
    let out = actions(&mut client);
    let auth = ClientMessage::Auth {
        token: "t0k".into(),
    };
    assert_eq!(sent(&out)?, [auth]);
    let hello_at = out.iter().position(|a| matches!(a, Action::Hello(Ok(()))));
    assert_eq!(
        hello_at,
        Some(1),
        "connect resolves after the token went: {out:?}"
    );
    Ok(())
}

#[test]
fn aborting_connect_fails_it_with_cancelled() -> TestResult {
    let mut client = Client::new(Budget::new(1 << 20), Credentials::None);
    client.abort();
    let aborted = Failure::new(CANCELLED, "connect was aborted before the gateway's hello");
    assert_eq!(
        hello_result(&actions(&mut client)),
        Some(Err(aborted.clone()))
    );
    assert_eq!(client.connect_failure(), aborted);
    Ok(())
}

#[test]
fn a_connect_that_failed_says_why_or_that_the_connection_is_closed() {
    let mut client = Client::new(Budget::new(1 << 20), Credentials::None);
    let closed = Failure::new(UNAVAILABLE, "the connection is closed");
    assert_eq!(client.connect_failure(), closed, "no failure recorded");
    client.on_close(1006, "");
    let failure = Failure::new(UNAVAILABLE, "the connection closed (code 1006)");
    assert_eq!(client.connect_failure(), failure);
}

fn actions(client: &mut Client) -> Vec<Action> {
    std::iter::from_fn(|| client.poll_action()).collect()
}

/// The control messages among `actions`.
fn sent(actions: &[Action]) -> TestResult<Vec<ClientMessage>> {
    let mut out = Vec::new();
    for action in actions {
        if let Action::Send(json) = action {
            out.push(ClientMessage::from_json(json)?);
        }
    }
    Ok(out)
}

/// How DoGet `stream` ended among `actions`, if it did.
fn ended(actions: &[Action], stream: u32) -> Option<Result<(), Failure>> {
    actions.iter().find_map(|a| match a {
        Action::GetEnded { stream: s, result } if *s == stream => Some(result.clone()),
        _ => None,
    })
}

fn frame(client: &mut Client, stream: u32, ipc: &[u8]) -> TestResult {
    let bytes = frame::encode(stream, FrameKind::Data, Flags::default(), b"", &[ipc])?;
    receive(client, &bytes);
    Ok(())
}

/// Hands `client` all of `ipc` for stream `stream`, in frames of at most SEGMENT bytes.
fn frames(client: &mut Client, stream: u32, ipc: &[u8]) -> TestResult {
    for segment in ipc.chunks(SEGMENT) {
        frame(client, stream, segment)?;
    }
    Ok(())
}

/// Hands `client` one binary message.
fn receive(client: &mut Client, bytes: &[u8]) {
    client.on_frame(
        &bytes[..HEADER_LEN.min(bytes.len())],
        bytes.len(),
        |range| bytes[range].to_vec(),
        |decoder, range| decoder.push(&bytes[range]),
    );
}

fn status(client: &mut Client, stream: u32, code: i32, message: &str) -> TestResult {
    let status = ServerMessage::Status {
        stream,
        code,
        name: code_name(code).into(),
        message: message.into(),
        details: Vec::new(),
    };
    client.on_text(&status.to_json()?);
    Ok(())
}

/// An IPC stream of `batches` batches of `rows` Int32 rows.
fn stream_bytes(batches: usize, rows: i32) -> TestResult<Vec<u8>> {
    let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int32, false)]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(Int32Array::from_iter_values(0..rows))],
    )?;
    let mut writer = StreamWriter::try_new(Vec::new(), &schema)?;
    for _ in 0..batches {
        writer.write(&batch)?;
    }
    writer.finish()?;
    Ok(writer.into_inner()?)
}

/// The gateway's side of one DoGet: it sends the stream in segments, never more than the
/// client's credit, and takes the client's grants.
struct Sender {
    stream: u32,
    bytes: Vec<u8>,
    at: usize,
    credit: Credit,
}

impl Sender {
    fn new(stream: u32, bytes: Vec<u8>, window: u64) -> TestResult<Self> {
        Ok(Sender {
            stream,
            bytes,
            at: 0,
            credit: Credit::new(window)?,
        })
    }

    fn done(&self) -> bool {
        self.at == self.bytes.len()
    }

    /// Sends what credit allows.
    fn pump(&mut self, client: &mut Client) -> TestResult {
        while !self.done() {
            let n = self
                .credit
                .take_up_to(SEGMENT.min(self.bytes.len() - self.at));
            if n == 0 {
                break;
            }
            let segment = self.bytes[self.at..self.at + n].to_vec();
            frame(client, self.stream, &segment)?;
            self.at += n;
        }
        Ok(())
    }

    /// Takes the grants among `actions`.
    fn take_grants(&mut self, actions: &[Action]) -> TestResult<u64> {
        let mut granted = 0;
        for message in sent(actions)? {
            if let ClientMessage::Credit { stream, bytes } = message {
                assert_eq!(stream, self.stream);
                self.credit.grant(bytes)?;
                granted += bytes;
            }
        }
        Ok(granted)
    }
}

fn next(client: &mut Client, id: u32) -> TestResult<Next> {
    let (get, out) = client.get_mut(id)?;
    Ok(get.next(out)?)
}

#[test]
fn credit_runs_out_and_resumes() -> TestResult {
    let mut client = connect(Budget::new(budget::DEFAULT_BUDGET_BYTES))?;
    let window = 8 * SEGMENT as u64;
    let id = client.open_get(b"t".to_vec(), Vec::new(), Some(window));
    let request = sent(&actions(&mut client))?;
    assert_eq!(request[0].stream(), Some(id));
    let bytes = stream_bytes(16, 20)?;
    assert!(
        bytes.len() as u64 > 2 * window,
        "the stream needs several windows"
    );
    let mut gateway = Sender::new(id, bytes, window)?;

    // Nobody reads: once the bytes of the batches queued here fill the window, no more
    // credit comes, and the gateway stalls.
    loop {
        gateway.pump(&mut client)?;
        if gateway.take_grants(&actions(&mut client))? == 0 {
            break;
        }
    }
    assert!(!gateway.done());
    let queued = client.get(id).map(|g| g.stats().read.batches);
    assert!(queued > Some(1), "batches wait unread: {queued:?}");

    // Reading earns credit back, and the gateway resumes until the stream is whole.
    let mut batches = 0;
    while !gateway.done() {
        match next(&mut client, id)? {
            Next::Chunk(_) => batches += 1,
            other => return Err(format!("expected a queued batch, found {other:?}").into()),
        }
        gateway.take_grants(&actions(&mut client))?;
        gateway.pump(&mut client)?;
    }
    status(&mut client, id, 0, "")?;
    while let Next::Chunk(_) = next(&mut client, id)? {
        batches += 1;
    }
    assert_eq!(batches, 16);
    assert!(matches!(next(&mut client, id)?, Next::End(Ok(()))));
    Ok(())
}

#[test]
fn a_status_racing_the_last_frame() -> TestResult {
    let bytes = stream_bytes(2, 10)?;
    let (body, eos) = bytes.split_at(bytes.len() - 8);
    let mut client = connect(Budget::new(budget::DEFAULT_BUDGET_BYTES))?;

    // OK before the end-of-stream marker: the data is not whole, whatever comes after.
    let early = client.open_get(b"t".to_vec(), Vec::new(), Some(1 << 20));
    for segment in body.chunks(SEGMENT) {
        frame(&mut client, early, segment)?;
    }
    actions(&mut client);
    status(&mut client, early, 0, "")?;
    let incomplete = Failure::new(
        DATA_LOSS,
        "the gateway ended the stream with OK before its end-of-stream marker: the data is \
         incomplete",
    );
    assert_eq!(
        ended(&actions(&mut client), early),
        Some(Err(incomplete.clone()))
    );
    frame(&mut client, early, eos)?;
    assert!(
        actions(&mut client).is_empty(),
        "the late frame raced the end"
    );
    assert_eq!(client.failure(), None);
    while let Next::Chunk(_) = next(&mut client, early)? {}
    assert!(matches!(next(&mut client, early)?, Next::End(Err(f)) if f == incomplete));

    // The last frame, then OK: whole.
    let whole = client.open_get(b"t".to_vec(), Vec::new(), Some(1 << 20));
    for segment in bytes.chunks(SEGMENT) {
        frame(&mut client, whole, segment)?;
    }
    status(&mut client, whole, 0, "")?;
    assert_eq!(ended(&actions(&mut client), whole), Some(Ok(())));
    Ok(())
}

#[test]
fn cancel_while_frames_are_in_flight() -> TestResult {
    let bytes = stream_bytes(4, 50)?;
    let window = 4 * SEGMENT as u64;
    let mut client = connect(Budget::new(budget::DEFAULT_BUDGET_BYTES))?;
    let id = client.open_get(b"t".to_vec(), Vec::new(), Some(window));
    frame(&mut client, id, &bytes[..SEGMENT])?;
    actions(&mut client);

    client.cancel(id);
    let done = actions(&mut client);
    assert_eq!(sent(&done)?, [ClientMessage::Cancel { stream: id }]);
    let cancelled = Failure::new(CANCELLED, "cancelled by the client");
    assert_eq!(ended(&done, id), Some(Err(cancelled.clone())));

    // What the gateway sent before the cancel reached it, even past the credit, and its
    // status, are dropped: the stream has ended here.
    for segment in bytes[SEGMENT..].chunks(SEGMENT) {
        frame(&mut client, id, segment)?;
    }
    status(&mut client, id, CANCELLED, "cancelled")?;
    assert!(actions(&mut client).is_empty());
    assert_eq!(client.failure(), None);
    assert_eq!(
        client.get(id).map(|g| g.stats().bytes_received),
        Some(SEGMENT as u64)
    );
    assert!(matches!(next(&mut client, id)?, Next::End(Err(f)) if f == cancelled));
    Ok(())
}

#[test]
fn a_stream_released_while_a_read_waits_is_cancelled_once_the_read_has_its_chunk() -> TestResult {
    let bytes = stream_bytes(3, 10)?;
    let mut client = connect(Budget::new(budget::DEFAULT_BUDGET_BYTES))?;
    let id = client.open_get(b"t".to_vec(), Vec::new(), Some(1 << 20));
    actions(&mut client);
    assert!(matches!(next(&mut client, id)?, Next::Wait));
    // The handle goes (the garbage collector, or free()) while its next() is pending.
    client.release(id);
    assert_eq!(sent(&actions(&mut client))?, []);

    frames(&mut client, id, &bytes)?;
    let done = actions(&mut client);
    let chunks = done
        .iter()
        .filter(|a| matches!(a, Action::Chunk { stream, .. } if *stream == id))
        .count();
    assert_eq!(
        chunks, 1,
        "the waiting read gets its chunk, and nothing is queued"
    );
    assert!(sent(&done)?.contains(&ClientMessage::Cancel { stream: id }));
    let cancelled = Failure::new(CANCELLED, "cancelled by the client");
    assert_eq!(ended(&done, id), Some(Err(cancelled)));
    assert!(client.get(id).is_none(), "the stream is forgotten");
    Ok(())
}

#[test]
fn read_all_again_after_the_end_gives_nothing_more() -> TestResult {
    let bytes = stream_bytes(2, 10)?;
    let mut client = connect(Budget::new(budget::DEFAULT_BUDGET_BYTES))?;
    let id = client.open_get(b"t".to_vec(), Vec::new(), Some(1 << 20));
    frames(&mut client, id, &bytes)?;
    status(&mut client, id, 0, "")?;
    actions(&mut client);
    let (get, out) = client.get_mut(id)?;
    let rows = |collected: Option<Collected>| -> TestResult<Vec<usize>> {
        let (_, batches) = collected.ok_or("no batches")?.map_err(|f| f.message)?;
        Ok(batches.iter().map(|(b, _)| b.num_rows()).collect())
    };
    assert_eq!(rows(get.collect(out)?)?, [10, 10]);
    assert_eq!(rows(get.collect(out)?)?, Vec::<usize>::new());
    Ok(())
}

#[test]
fn stream_ids_are_never_reused_or_lowered() -> TestResult {
    let bytes = stream_bytes(1, 10)?;
    let mut client = connect(Budget::new(budget::DEFAULT_BUDGET_BYTES))?;
    let first = client.open_get(b"t".to_vec(), Vec::new(), Some(1 << 20));
    client.cancel(first);
    client.release(first);
    let call = client
        .call(ClientMessage::ListActions { stream: 0 })
        .map_err(|f| f.message)?;
    let second = client.open_get(b"t".to_vec(), Vec::new(), Some(1 << 20));
    let ids: Vec<Option<u32>> = sent(&actions(&mut client))?
        .iter()
        .filter(|m| !matches!(m, ClientMessage::Cancel { .. }))
        .map(ClientMessage::stream)
        .collect();
    assert_eq!(ids, [Some(first), Some(call), Some(second)]);
    assert!(first < call && call < second);

    // Frames and a status for the finished stream do not reach the new one.
    frame(&mut client, first, &bytes[..SEGMENT])?;
    status(&mut client, first, 0, "")?;
    assert!(actions(&mut client).is_empty());
    assert_eq!(
        client.get(second).map(|g| g.stats().bytes_received),
        Some(0)
    );

    // Stream id 0 is never valid.
    frame(&mut client, 0, &bytes[..SEGMENT])?;
    let broken = Failure::new(
        INTERNAL,
        "the gateway broke the protocol: frame stream id must be non-zero, found 0",
    );
    assert_eq!(client.failure(), Some(&broken));
    assert_eq!(ended(&actions(&mut client), second), Some(Err(broken)));
    Ok(())
}

#[test]
fn a_frame_beyond_granted_credit_breaks_the_protocol() -> TestResult {
    let window = SEGMENT as u64 / 2;
    let mut client = connect(Budget::new(budget::DEFAULT_BUDGET_BYTES))?;
    let id = client.open_get(b"t".to_vec(), Vec::new(), Some(window));
    let bytes = stream_bytes(4, 50)?;
    frame(&mut client, id, &bytes[..window as usize + 1])?;
    let broken = Failure::new(
        INTERNAL,
        format!(
            "the gateway broke the protocol: frame of {} bytes exceeds the remaining \
             credit of {window} bytes",
            window + 1
        ),
    );
    assert_eq!(client.failure(), Some(&broken));
    let done = actions(&mut client);
    assert_eq!(ended(&done, id), Some(Err(broken)));
    assert!(matches!(
        done.last(),
        Some(Action::Close {
            code: 1002,
            reason: "protocol error"
        })
    ));
    Ok(())
}

#[test]
fn a_frame_for_a_stream_never_opened_or_not_a_do_get_breaks_the_protocol() -> TestResult {
    let broken = |message: &str| {
        Failure::new(
            INTERNAL,
            format!("the gateway broke the protocol: {message}"),
        )
    };
    let mut client = connect(Budget::new(budget::DEFAULT_BUDGET_BYTES))?;
    let get = client.open_get(b"t".to_vec(), Vec::new(), None);
    frame(&mut client, get + 98, &stream_bytes(1, 5)?[..8])?;
    let never = broken(&format!("stream {} was never opened", get + 98));
    assert_eq!(client.failure(), Some(&never));
    assert_eq!(ended(&actions(&mut client), get), Some(Err(never)));

    let mut client = connect(Budget::new(budget::DEFAULT_BUDGET_BYTES))?;
    let put = client.open_put(Descriptor::Path(vec!["p".into()]));
    frame(&mut client, put, &stream_bytes(1, 5)?[..8])?;
    let not_get = broken(&format!(
        "binary frames from the gateway go to DoGet streams only; stream {put} is not one"
    ));
    assert_eq!(client.failure(), Some(&not_get));
    Ok(())
}

#[test]
fn the_budget_is_shared_by_concurrent_do_gets() -> TestResult {
    let bytes = stream_bytes(4, 1000)?;
    let read = |client: &mut Client, id: u32| -> TestResult<u64> {
        for segment in bytes.chunks(SEGMENT) {
            frame(client, id, segment)?;
        }
        Ok(client.budget.held())
    };
    // What one stream holds with its batches unread.
    let alone = {
        let mut client = connect(Budget::new(budget::DEFAULT_BUDGET_BYTES))?;
        let id = client.open_get(b"t".to_vec(), Vec::new(), Some(1 << 20));
        read(&mut client, id)?
    };
    assert!(alone > 4 * 4000, "four batches of 1000 Int32 rows");

    // Room for one stream's batches, not two.
    let limit = alone * 3 / 2;
    let budget = Budget::new(limit);
    let mut client = connect(Rc::clone(&budget))?;
    let first = client.open_get(b"t".to_vec(), Vec::new(), Some(1 << 20));
    let second = client.open_get(b"t".to_vec(), Vec::new(), Some(1 << 20));
    let held = read(&mut client, first)?;
    assert!(held <= limit);
    read(&mut client, second)?;
    let done = actions(&mut client);
    assert!(sent(&done)?.contains(&ClientMessage::Cancel { stream: second }));
    let Some(Err(failure)) = ended(&done, second) else {
        return Err(format!("expected stream {second} to fail, found {done:?}").into());
    };
    assert_eq!(failure.code, RESOURCE_EXHAUSTED, "{}", failure.message);
    assert!(
        failure
            .message
            .ends_with(&format!("over their limit of {limit} bytes")),
        "{}",
        failure.message
    );
    assert_eq!(ended(&done, first), None, "the first stream goes on");
    // The failed stream holds the batches it decoded until its handle goes.
    assert!(budget.held() > held);
    client.release(second);
    assert_eq!(budget.held(), held, "the failed stream let go of its share");

    // Reading the first stream's batches frees the budget for a third.
    while let Next::Chunk(_) = next(&mut client, first)? {}
    let third = client.open_get(b"t".to_vec(), Vec::new(), Some(1 << 20));
    assert!(read(&mut client, third)? <= limit);
    assert_eq!(ended(&actions(&mut client), third), None);
    Ok(())
}

#[test]
fn a_message_over_the_gateways_max_message_bytes_fails_its_do_get() -> TestResult {
    // hello() announces 1 MiB; this stream's batch message is 1.2 MB.
    let bytes = stream_bytes(1, 300_000)?;
    let mut client = connect(Budget::new(budget::DEFAULT_BUDGET_BYTES))?;
    assert_eq!(client.limits().max_message, 1 << 20);
    let id = client.open_get(b"t".to_vec(), Vec::new(), Some(1 << 20));
    frames(&mut client, id, &bytes[..2048])?;
    let Some(Err(failure)) = ended(&actions(&mut client), id) else {
        return Err("expected the stream to fail".into());
    };
    assert!(
        failure
            .message
            .contains("exceeds maxMessageBytes = 1048576 bytes"),
        "{}",
        failure.message
    );
    Ok(())
}

#[test]
fn an_ended_stream_holds_its_unread_batches_against_the_budget() -> TestResult {
    let bytes = stream_bytes(4, 1000)?;
    let budget = Budget::new(budget::DEFAULT_BUDGET_BYTES);
    let mut client = connect(Rc::clone(&budget))?;
    let id = client.open_get(b"t".to_vec(), Vec::new(), Some(1 << 20));
    frames(&mut client, id, &bytes)?;
    let unread = budget.held();
    assert!(
        unread > 4 * 4000,
        "four batches of 1000 Int32 rows: {unread}"
    );
    // The stream ends with its batches unread: they are still held, so other streams
    // cannot take that memory too.
    status(&mut client, id, 0, "")?;
    assert_eq!(ended(&actions(&mut client), id), Some(Ok(())));
    let held = budget.held();
    assert!(held > 4 * 4000 && held <= unread, "{held} of {unread}");
    // Each chunk read lets go of its share; the last leaves nothing held.
    let mut before = held;
    while let Next::Chunk(_) = next(&mut client, id)? {
        assert!(budget.held() < before, "{} after {before}", budget.held());
        before = budget.held();
    }
    assert_eq!(budget.held(), 0);
    Ok(())
}

#[test]
fn fetch_all_cancels_the_rest_on_the_first_error() -> TestResult {
    let budget = Budget::new(budget::DEFAULT_BUDGET_BYTES);
    let mut sockets = [connect(Rc::clone(&budget))?, connect(budget)?];
    let plan = FetchPlan {
        endpoints: 5,
        ordered: false,
        concurrency: None,
        sockets: 2,
        max_streams: 2,
    };
    assert_eq!(
        plan.readers(),
        4,
        "as many as the gateway allows on two sockets"
    );
    let mut fetch = Fetch::new(plan.endpoints);
    // Each reader takes an endpoint and reads it on its socket.
    let mut reading = Vec::new();
    for reader in 0..plan.readers() {
        let endpoint = fetch.take().ok_or("an endpoint is left")?;
        let socket = plan.socket_of(reader);
        let id = sockets[socket].open_get(vec![endpoint as u8], Vec::new(), None);
        fetch.reading(endpoint, (socket, id));
        reading.push((socket, id));
    }
    assert_eq!(reading, [(0, 1), (1, 1), (0, 2), (1, 2)]);
    for client in &mut sockets {
        actions(client);
    }

    // Endpoint 1 fails: the streams reading 0, 2 and 3 are cancelled, each on its socket,
    // and 4 is never read.
    let (socket, id) = reading[1];
    status(&mut sockets[socket], id, 5, "no such ticket")?;
    let Some(Err(failure)) = ended(&actions(&mut sockets[socket]), id) else {
        return Err("expected the stream to fail".into());
    };
    let Err((failure, rest)) = fetch.record(1, Err(failure)) else {
        return Err("expected the fetch to fail".into());
    };
    assert_eq!(failure.message, "no such ticket");
    assert_eq!(rest, [reading[0], reading[2], reading[3]]);
    for (socket, id) in rest {
        sockets[socket].cancel(id);
    }
    let cancel = |(_, stream): (usize, u32)| ClientMessage::Cancel { stream };
    assert_eq!(
        sent(&actions(&mut sockets[0]))?,
        [cancel(reading[0]), cancel(reading[2])]
    );
    assert_eq!(sent(&actions(&mut sockets[1]))?, [cancel(reading[3])]);
    assert_eq!(fetch.take(), None);
    let cancelled = Err(Failure::cancelled());
    assert!(
        matches!(fetch.record(0, cancelled), Err((_, rest)) if rest.is_empty()),
        "the others were cancelled once"
    );
    Ok(())
}

#[test]
fn fetch_all_takes_the_flight_infos_schema_when_no_endpoint_was_read() -> TestResult {
    let raw = messages(&stream_bytes(0, 0)?)?.remove(0);
    let (schema, batches) = ok(Fetch::<u32>::new(0).into_batches(&raw))?;
    assert_eq!((schema.field(0).name().as_str(), batches.len()), ("a", 0));
    // Once an endpoint was read, its schema is the table's.
    let mut fetch = Fetch::<u32>::new(1);
    let read = Arc::new(Schema::new(vec![Field::new("b", DataType::Utf8, true)]));
    fetch.take();
    assert!(fetch.record(0, Ok((read.clone(), Vec::new()))).is_ok());
    assert_eq!(ok(fetch.into_batches(&raw))?.0, read);
    Ok(())
}

#[test]
fn fetch_plan_readers() {
    let plan = |ordered, concurrency, sockets, max_streams| FetchPlan {
        endpoints: 8,
        ordered,
        concurrency,
        sockets,
        max_streams,
    };
    assert_eq!(plan(true, None, 4, 16).readers(), 1);
    assert_eq!(plan(false, None, 1, 16).readers(), 8);
    assert_eq!(plan(false, Some(3), 2, 16).readers(), 3);
    assert_eq!(plan(false, Some(3), 2, 16).sockets(), 2);
    assert_eq!(plan(false, None, 2, 2).readers(), 4);
    assert_eq!(plan(false, Some(0), 1, 16).readers(), 1);
    let dealt: Vec<usize> = (0..8)
        .map(|r| plan(false, None, 3, 16).socket_of(r))
        .collect();
    assert_eq!(dealt, [0, 1, 2, 0, 1, 2, 0, 1]);
}

const DOWN: &str = "grpc://127.0.0.1:1";
const REFUSED: &str = "grpc://169.254.169.254:80";
const UP: &str = "grpc://127.0.0.1:2";

fn do_get(stream: u32, location: &str, window: u64) -> ClientMessage {
    ClientMessage::DoGet {
        stream,
        ticket: b"t".to_vec(),
        location: Some(location.into()),
        credit: Some(window),
    }
}

#[test]
fn a_location_that_cannot_be_read_is_passed_over_for_the_next() -> TestResult {
    let mut client = connect(Budget::new(budget::DEFAULT_BUDGET_BYTES))?;
    let window = 8 * SEGMENT as u64;
    let locations = vec![DOWN.into(), REFUSED.into(), UP.into()];
    let id = client.open_get(b"t".to_vec(), locations, Some(window));
    assert_eq!(sent(&actions(&mut client))?, [do_get(id, DOWN, window)]);

    // Unreachable, then refused by the gateway: each time the next location is asked, as
    // a new request, and the stream goes on.
    status(&mut client, id, UNAVAILABLE, "tcp connect error")?;
    let moved = actions(&mut client);
    assert_eq!(ended(&moved, id), None);
    assert_eq!(sent(&moved)?, [do_get(id + 1, REFUSED, window)]);
    let refusal = "location grpc://169.254.169.254:80 is not in the gateway's allowed locations";
    status(&mut client, id + 1, PERMISSION_DENIED, refusal)?;
    assert_eq!(sent(&actions(&mut client))?, [do_get(id + 2, UP, window)]);

    // The third location answers: its frames and status reach the stream by its own id,
    // and credit and cancellation go to the request the gateway answers.
    let mut gateway = Sender::new(id + 2, stream_bytes(4, 20)?, window)?;
    gateway.pump(&mut client)?;
    while let Next::Chunk(_) = next(&mut client, id)? {
        let out = actions(&mut client);
        for message in sent(&out)? {
            assert!(matches!(message, ClientMessage::Credit { stream, .. } if stream == id + 2));
        }
        gateway.take_grants(&out)?;
        gateway.pump(&mut client)?;
    }
    assert!(gateway.done());
    assert_eq!(client.get(id).map(|g| g.stats().read.batches), Some(4));
    client.cancel(id);
    assert_eq!(
        sent(&actions(&mut client))?,
        [ClientMessage::Cancel { stream: id + 2 }]
    );
    Ok(())
}

#[test]
fn a_request_moved_on_from_reaches_the_stream_no_more() -> TestResult {
    let mut client = connect(Budget::new(budget::DEFAULT_BUDGET_BYTES))?;
    let window = 8 * SEGMENT as u64;
    let locations = vec![DOWN.into(), UP.into(), REFUSED.into()];
    let id = client.open_get(b"t".to_vec(), locations, Some(window));
    actions(&mut client);
    status(&mut client, id, UNAVAILABLE, "tcp connect error")?;
    assert_eq!(sent(&actions(&mut client))?, [do_get(id + 1, UP, window)]);

    // The first request's status again, and a frame on it: neither is the second
    // request's, so no third location is asked and the stream reads on.
    status(&mut client, id, UNAVAILABLE, "tcp connect error (again)")?;
    frame(&mut client, id, &stream_bytes(1, 20)?[..64])?;
    let out = actions(&mut client);
    assert_eq!(sent(&out)?, [], "no third request");
    assert_eq!(ended(&out, id), None);
    let mut gateway = Sender::new(id + 1, stream_bytes(2, 20)?, window)?;
    gateway.pump(&mut client)?;
    while let Next::Chunk(_) = next(&mut client, id)? {
        gateway.take_grants(&actions(&mut client))?;
        gateway.pump(&mut client)?;
    }
    assert!(gateway.done());
    assert_eq!(client.get(id).map(|g| g.stats().read.batches), Some(2));
    Ok(())
}

#[test]
fn when_every_location_fails_the_error_names_each() -> TestResult {
    let mut client = connect(Budget::new(budget::DEFAULT_BUDGET_BYTES))?;
    let id = client.open_get(b"t".to_vec(), vec![DOWN.into(), UP.into()], None);
    status(&mut client, id, UNAVAILABLE, "tcp connect error")?;
    status(&mut client, id + 1, UNAVAILABLE, "connection reset")?;
    let out = actions(&mut client);
    assert_eq!(sent(&out)?.len(), 2, "two requests, no third");
    let Some(Err(failure)) = ended(&out, id) else {
        return Err("expected the stream to fail".into());
    };
    assert_eq!(failure.code, UNAVAILABLE);
    assert_eq!(
        failure.message,
        "2 of the endpoint's 2 locations failed: grpc://127.0.0.1:1: UNAVAILABLE tcp \
         connect error; grpc://127.0.0.1:2: UNAVAILABLE connection reset"
    );
    Ok(())
}

#[test]
fn only_a_location_unreachable_or_refused_before_any_byte_is_passed_over() -> TestResult {
    let mut client = connect(Budget::new(budget::DEFAULT_BUDGET_BYTES))?;
    let two = || vec![DOWN.to_string(), UP.to_string()];

    // The server's own answer stands.
    let answered = client.open_get(b"t".to_vec(), two(), None);
    actions(&mut client);
    status(&mut client, answered, 16, "bad or missing bearer token")?;
    let out = actions(&mut client);
    assert_eq!(sent(&out)?, []);
    let failure = ended(&out, answered).ok_or("the stream ended")?;
    assert_eq!(
        failure.map_err(|f| (f.code, f.message)),
        Err((16, "bad or missing bearer token".to_string()))
    );

    // Once a byte arrived, reading elsewhere would repeat batches.
    let started = client.open_get(b"t".to_vec(), two(), None);
    actions(&mut client);
    frame(&mut client, started, &stream_bytes(1, 1)?[..8])?;
    actions(&mut client);
    status(
        &mut client,
        started,
        UNAVAILABLE,
        "upstream connection lost",
    )?;
    let out = actions(&mut client);
    assert_eq!(sent(&out)?, []);
    assert!(
        matches!(ended(&out, started), Some(Err(f)) if f.message == "upstream connection lost")
    );

    // The last location's failure is the stream's, as it came.
    let one = client.open_get(b"t".to_vec(), vec![DOWN.into()], None);
    actions(&mut client);
    status(&mut client, one, UNAVAILABLE, "tcp connect error")?;
    let out = actions(&mut client);
    assert!(matches!(ended(&out, one), Some(Err(f)) if f.message == "tcp connect error"));

    // A connection that closed fails every stream where it is.
    let closed = client.open_get(b"t".to_vec(), two(), None);
    actions(&mut client);
    client.on_close(1006, "");
    let out = actions(&mut client);
    assert_eq!(sent(&out)?, []);
    assert!(matches!(ended(&out, closed), Some(Err(f)) if f.code == UNAVAILABLE));
    Ok(())
}

/// A stream of a dictionary-encoded column: schema, dictionary, batch, batch, end.
fn dictionary_stream() -> TestResult<Vec<u8>> {
    let column: DictionaryArray<Int32Type> = vec!["a", "b", "a"].into_iter().collect();
    let batch = RecordBatch::try_from_iter([("d", Arc::new(column) as ArrayRef)])?;
    let mut writer = StreamWriter::try_new(Vec::new(), &batch.schema())?;
    writer.write(&batch)?;
    writer.write(&batch)?;
    writer.finish()?;
    Ok(writer.into_inner()?)
}

/// Each encapsulated message of an IPC stream, the end-of-stream marker last.
fn messages(ipc: &[u8]) -> TestResult<Vec<Vec<u8>>> {
    let mut split = Vec::new();
    Splitter::new(1 << 20).push(ipc, &mut split)?;
    let mut out = Vec::new();
    for m in split {
        let (p, pad) = prefix(m.header.len())?;
        let mut bytes = p.to_vec();
        bytes.extend_from_slice(&m.header);
        bytes.resize(bytes.len() + pad, 0);
        bytes.extend_from_slice(&m.body);
        out.push(bytes);
    }
    out.push(ipc[ipc.len() - 8..].to_vec());
    Ok(out)
}

/// Sends `message` as the gateway does: segments of at most SEGMENT bytes of payload,
/// `app_metadata` in the first.
fn send_message(
    client: &mut Client,
    stream: u32,
    message: &[u8],
    app_metadata: &[u8],
) -> TestResult {
    let mut sent = 0;
    while sent < message.len() {
        let meta: &[u8] = if sent == 0 { app_metadata } else { b"" };
        let n = (message.len() - sent).min(SEGMENT - meta.len());
        let flags = Flags {
            first: sent == 0,
            last: sent + n == message.len(),
        };
        let bytes = frame::encode(
            stream,
            FrameKind::Data,
            flags,
            meta,
            &[&message[sent..sent + n]],
        )?;
        receive(client, &bytes);
        sent += n;
    }
    Ok(())
}

fn send_metadata(client: &mut Client, stream: u32, app_metadata: &[u8]) -> TestResult {
    let bytes = frame::encode(stream, FrameKind::Metadata, Flags::WHOLE, app_metadata, &[])?;
    receive(client, &bytes);
    Ok(())
}

/// What `read` got: each chunk's batch rows (None: no batch) and app_metadata.
type Read = Vec<(Option<usize>, Option<Vec<u8>>)>;

fn read_chunk(next: Next) -> TestResult<(Option<usize>, Option<Vec<u8>>)> {
    match next {
        Next::Chunk(Chunk {
            batch,
            app_metadata,
        }) => Ok((batch.map(|(b, _)| b.num_rows()), app_metadata)),
        other => Err(format!("expected a chunk, found {other:?}").into()),
    }
}

#[test]
fn app_metadata_goes_with_its_batch_or_comes_alone_in_order() -> TestResult {
    let mut client = connect(Budget::new(budget::DEFAULT_BUDGET_BYTES))?;
    let ipc = dictionary_stream()?;
    let [schema, dictionary, first, second, end] = &messages(&ipc)?[..] else {
        return Err("expected five messages".into());
    };
    let id = client.open_get(b"t".to_vec(), Vec::new(), Some(1 << 20));
    actions(&mut client);
    // A readChunk() waits when the first chunk comes.
    let (get, out) = client.get_mut(id)?;
    assert!(matches!(get.next(out)?, Next::Wait));
    send_message(&mut client, id, schema, b"of the schema")?;
    let delivered = actions(&mut client).into_iter().find_map(|a| match a {
        Action::Chunk { stream, chunk } if stream == id => Some(chunk),
        _ => None,
    });
    let Some(chunk) = delivered else {
        return Err("the waiting readChunk() got nothing".into());
    };
    assert_eq!(
        read_chunk(Next::Chunk(chunk))?,
        (None, Some(b"of the schema".to_vec()))
    );

    // Then the rest queues, and comes out in order.
    send_message(&mut client, id, dictionary, b"of the dictionary")?;
    send_message(&mut client, id, first, b"of the first batch")?;
    send_metadata(&mut client, id, b"alone")?;
    // Empty app_metadata is none: an empty metadata frame makes no chunk.
    send_metadata(&mut client, id, b"")?;
    send_message(&mut client, id, second, b"")?;
    send_message(&mut client, id, end, b"")?;
    status(&mut client, id, 0, "")?;
    let mut read: Read = Vec::new();
    loop {
        let (get, out) = client.get_mut(id)?;
        match get.next(out)? {
            Next::End(result) => {
                assert_eq!(result, Ok(()));
                break;
            }
            next => read.push(read_chunk(next)?),
        }
    }
    let expected: Read = vec![
        (None, Some(b"of the dictionary".to_vec())),
        (Some(3), Some(b"of the first batch".to_vec())),
        (None, Some(b"alone".to_vec())),
        (Some(3), None),
    ];
    assert_eq!(read, expected);
    Ok(())
}

/// The credit granted among `actions`.
fn granted_by(actions: &[Action]) -> TestResult<u64> {
    let mut granted = 0;
    for message in sent(actions)? {
        if let ClientMessage::Credit { bytes, .. } = message {
            granted += bytes;
        }
    }
    Ok(granted)
}

#[test]
fn read_all_skips_app_metadata_and_reading_it_gives_its_credit_back() -> TestResult {
    let window = 4 * SEGMENT as u64;
    let ipc = stream_bytes(2, 5)?;
    let [schema, first, second, end] = &messages(&ipc)?[..] else {
        return Err("expected four messages".into());
    };
    for collect in [false, true] {
        let mut client = connect(Budget::new(budget::DEFAULT_BUDGET_BYTES))?;
        let id = client.open_get(b"t".to_vec(), Vec::new(), Some(window));
        actions(&mut client);
        send_message(&mut client, id, schema, b"s")?;
        // The bytes of a message still arriving are granted back as they come (the budget
        // bounds it); a message's whole chunk, once read, is held until consumed.
        let granted = granted_by(&actions(&mut client))?;
        // Metadata frames fill what the window has left: nobody read them, so no credit
        // comes back.
        let received = window + granted;
        let left = received - schema.len() as u64 - 1;
        for _ in 0..left {
            send_metadata(&mut client, id, b"m")?;
        }
        assert_eq!(sent(&actions(&mut client))?, []);
        assert_eq!(
            client.get(id).map(|g| g.stats().bytes_received),
            Some(received)
        );
        let (get, out) = client.get_mut(id)?;
        if collect {
            assert!(get.collect(out)?.is_none());
        } else {
            let mut alone = 0;
            while let Next::Chunk(Chunk { batch: None, .. }) = get.next(out)? {
                alone += 1;
            }
            assert_eq!(
                alone,
                left + 1,
                "the schema's app_metadata and each frame's"
            );
        }
        // Reading or skipping them consumed them: all not granted back comes back.
        assert_eq!(granted_by(&actions(&mut client))?, received - granted);
        send_message(&mut client, id, first, b"with the first")?;
        let out = actions(&mut client);
        let chunk = out.iter().find_map(|a| match a {
            Action::Chunk { chunk, .. } => Some(chunk),
            _ => None,
        });
        let chunk = chunk.map(|c| {
            (
                c.batch.as_ref().map(|b| b.0.num_rows()),
                c.app_metadata.clone(),
            )
        });
        let expected = (!collect).then(|| (Some(5), Some(b"with the first".to_vec())));
        assert_eq!(chunk, expected, "{out:?}");
        send_message(&mut client, id, second, b"")?;
        send_message(&mut client, id, end, b"")?;
        status(&mut client, id, 0, "")?;
        if collect {
            let collected = actions(&mut client).into_iter().find_map(|a| match a {
                Action::Collected { result, .. } => Some(result),
                _ => None,
            });
            let Some(Ok((_, batches))) = collected else {
                return Err(format!("expected the batches, found {collected:?}").into());
            };
            assert_eq!(batches.len(), 2);
        } else {
            let second = read_chunk(next(&mut client, id)?)?;
            assert_eq!(second, (Some(5), None));
            assert!(matches!(next(&mut client, id)?, Next::End(Ok(()))));
        }
    }
    Ok(())
}

#[test]
fn metadata_frames_stay_within_the_credit_window_and_the_budget() -> TestResult {
    let window = 256u64;
    // A metadata frame past the credit breaks the protocol, as any frame.
    let mut client = connect(Budget::new(budget::DEFAULT_BUDGET_BYTES))?;
    let id = client.open_get(b"t".to_vec(), Vec::new(), Some(window));
    actions(&mut client);
    for _ in 0..window {
        send_metadata(&mut client, id, b"m")?;
    }
    assert_eq!(client.failure(), None);
    send_metadata(&mut client, id, b"m")?;
    let broken = Failure::new(
        INTERNAL,
        "the gateway broke the protocol: frame of 1 bytes exceeds the remaining credit of 0 \
         bytes",
    );
    assert_eq!(client.failure(), Some(&broken));

    // Each unread chunk holds its bookkeeping against the budget too, not only its bytes:
    // 256 one-byte chunks hold far more than 256 bytes.
    let budget = Budget::new(16 * window);
    let mut client = connect(Rc::clone(&budget))?;
    let id = client.open_get(b"t".to_vec(), Vec::new(), Some(window));
    actions(&mut client);
    for _ in 0..window {
        send_metadata(&mut client, id, b"m")?;
    }
    let Some(Err(failure)) = ended(&actions(&mut client), id) else {
        return Err("expected the stream to fail".into());
    };
    assert_eq!(failure.code, RESOURCE_EXHAUSTED, "{}", failure.message);
    // Its unread chunks are held until its handle goes.
    assert!(budget.held() > 0);
    client.release(id);
    assert_eq!(budget.held(), 0, "the failed stream let go of its share");
    Ok(())
}

/// A DoPut frame, decoded: kind, flags, app_metadata, IPC bytes.
type SentFrame = (FrameKind, Flags, Vec<u8>, usize);

/// The frames among `actions`.
fn put_frames(actions: &[Action]) -> TestResult<Vec<SentFrame>> {
    let mut out = Vec::new();
    for action in actions {
        if let Action::Frame(f) = action {
            let bytes = [&f.header()[..], f.app_metadata(), f.payload()].concat();
            let f = frame::Frame::decode(&bytes, SEGMENT)?;
            out.push((f.kind, f.flags, f.app_metadata.to_vec(), f.ipc.len()));
        }
    }
    Ok(out)
}

fn grant(client: &mut Client, stream: u32, bytes: u64) -> TestResult {
    client.on_text(&ServerMessage::Credit { stream, bytes }.to_json()?);
    Ok(())
}

#[test]
fn put_results_after_the_upload_ended_are_not_kept() -> TestResult {
    let mut client = connect(Budget::new(budget::DEFAULT_BUDGET_BYTES))?;
    let id = client.open_put(Descriptor::Path(vec!["p".into()]));
    actions(&mut client);
    let result = ServerMessage::PutResult {
        stream: id,
        app_metadata: b"r".to_vec(),
    }
    .to_json()?;
    client.on_text(&result);
    assert_eq!(client.put_mut(id)?.0.results_kept(), 1);
    status(&mut client, id, UNAVAILABLE, "gone")?;
    actions(&mut client);
    // A gateway that goes on sending them after the end: nobody will take them.
    for _ in 0..1000 {
        client.on_text(&result);
    }
    assert_eq!(client.put_mut(id)?.0.results_kept(), 0);
    Ok(())
}

#[test]
fn do_put_app_metadata_rides_with_the_batch_message_within_credit() -> TestResult {
    let column: DictionaryArray<Int32Type> = vec!["a", "b", "a"].into_iter().collect();
    let batch = RecordBatch::try_from_iter([("d", Arc::new(column) as ArrayRef)])?;
    let mut client = connect(Budget::new(budget::DEFAULT_BUDGET_BYTES))?;
    let id = client.open_put(Descriptor::Path(vec!["p".into()]));
    actions(&mut client);
    let (put, out) = client.put_mut(id)?;
    let refused = put.write_metadata(b"early".to_vec(), out).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "write at least one batch before writeMetadata(): the schema comes first"
    );
    let big = vec![7; SEGMENT];
    let refused = put
        .write(&batch, &BatchMetadata::default(), big, out)
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "app_metadata of 64 bytes is over the 63 that fit in one frame"
    );
    let meta = b"page 1".to_vec();
    put.write(&batch, &BatchMetadata::default(), meta.clone(), out)?;
    put.write_metadata(b"alone".to_vec(), out)?;
    put.finish_upload(out)?;
    // Credit comes a byte at a time: a frame with app_metadata waits for it plus a byte.
    let mut frames = Vec::new();
    let mut balance: usize = 0;
    for _ in 0..10_000 {
        let out = actions(&mut client);
        for f in put_frames(&out)? {
            balance = balance
                .checked_sub(f.2.len() + f.3)
                .ok_or("a frame beyond the credit")?;
            frames.push(f);
        }
        if sent(&out)?.contains(&ClientMessage::End { stream: id }) {
            break;
        }
        grant(&mut client, id, 1)?;
        balance += 1;
        assert!(
            balance <= 1 + b"page 1".len(),
            "credit left unused: {balance} bytes"
        );
    }
    // The app_metadata of each message, in order: schema, dictionary, batch, metadata
    // alone, end of stream.
    let starts: Vec<(FrameKind, Vec<u8>)> = frames
        .iter()
        .filter(|f| f.1.first)
        .map(|f| (f.0, f.2.clone()))
        .collect();
    assert_eq!(
        starts,
        [
            (FrameKind::Data, Vec::new()),
            (FrameKind::Data, Vec::new()),
            (FrameKind::Data, meta),
            (FrameKind::Metadata, b"alone".to_vec()),
            (FrameKind::Data, Vec::new()),
        ]
    );
    Ok(())
}

/// The value of a call that succeeded; a failure fails the test with its code and text.
fn ok<T>(result: Result<T, Failure>) -> TestResult<T> {
    result.map_err(|f| format!("{} {}", f.code, f.message).into())
}

/// How call `stream` was answered among `actions`, if it was.
fn answer(actions: Vec<Action>, stream: u32) -> Option<Result<Vec<ServerMessage>, Failure>> {
    actions.into_iter().find_map(|a| match a {
        Action::Answer { stream: s, result } if s == stream => Some(result),
        _ => None,
    })
}

/// A PollFlightInfo call answered with `poll_infos` (JSON texts) and an OK status: what
/// its answer became.
fn poll(poll_infos: &[&str]) -> TestResult<Result<PollInfo, Failure>> {
    let mut client = connect(Budget::new(1 << 20))?;
    let descriptor = Descriptor::Cmd(b"q".to_vec());
    let id = ok(client.call(ClientMessage::PollFlightInfo {
        stream: 0,
        descriptor: descriptor.clone(),
    }))?;
    assert_eq!(
        sent(&actions(&mut client))?,
        [ClientMessage::PollFlightInfo {
            stream: id,
            descriptor
        }]
    );
    for text in poll_infos {
        client.on_text(&text.replace("ID", &id.to_string()));
    }
    status(&mut client, id, 0, "")?;
    let messages = ok(answer(actions(&mut client), id).ok_or("the call was answered")?)?;
    Ok(CallKind::Poll.answer(messages).map(|answer| match answer {
        Answer::One(answers::Item::Poll(poll)) => poll,
        other => panic!("a poll answered {other:?}"),
    }))
}

const INFO: &str = r#"{"schema":"","endpoints":[{"ticket":"AQ=="}],"totalRecords":-1,
    "totalBytes":-1,"ordered":false}"#;

#[test]
fn poll_flight_info_answers_where_the_query_stands() -> TestResult {
    let running = format!(
        r#"{{"type":"pollInfo","stream":ID,"info":{INFO},"descriptor":{{"cmd":"Ag=="}},
        "progress":0.25,"expirationTimeMs":5}}"#
    );
    let poll_info = ok(poll(&[running.as_str()])?)?;
    assert_eq!(poll_info.descriptor, Some(Descriptor::Cmd(vec![2])));
    assert_eq!(poll_info.progress, Some(0.25));
    assert_eq!(poll_info.expiration_time_ms, Some(5));
    assert_eq!(poll_info.info.map(|i| i.endpoints.len()), Some(1));
    // Nothing yet but the descriptor to poll next; progress unknown.
    let started = r#"{"type":"pollInfo","stream":ID,"descriptor":{"cmd":"Ag=="}}"#;
    let poll_info = ok(poll(&[started])?)?;
    assert_eq!((poll_info.info, poll_info.progress), (None, None));
    // Complete: no descriptor.
    let done = format!(r#"{{"type":"pollInfo","stream":ID,"info":{INFO},"progress":1}}"#);
    assert_eq!(ok(poll(&[done.as_str()])?)?.descriptor, None);
    Ok(())
}

#[test]
fn a_poll_flight_info_answer_is_one_poll_info() -> TestResult {
    let failed = |texts: &[&str]| -> TestResult<(i32, String)> {
        let failure = poll(texts)?.err().ok_or("the call failed")?;
        Ok((failure.code, failure.message))
    };
    let started = r#"{"type":"pollInfo","stream":ID,"descriptor":{"cmd":"Ag=="}}"#;
    assert_eq!(
        failed(&[started, started])?,
        (INTERNAL, "expected one pollInfo answer, found 2".into())
    );
    assert_eq!(
        failed(&[])?,
        (INTERNAL, "expected one pollInfo answer, found 0".into())
    );
    assert_eq!(
        failed(&[r#"{"type":"pollInfo","stream":ID,"progress":1}"#])?,
        (
            INTERNAL,
            "a complete pollInfo (no descriptor) must hold the query's info".into()
        )
    );
    Ok(())
}

#[test]
fn a_cancelled_call_fails_at_once_and_ignores_what_follows() -> TestResult {
    let mut client = connect(Budget::new(1 << 20))?;
    let id = ok(client.call(ClientMessage::PollFlightInfo {
        stream: 0,
        descriptor: Descriptor::Path(vec!["slow".into()]),
    }))?;
    actions(&mut client);
    client.cancel(id);
    let out = actions(&mut client);
    assert_eq!(sent(&out)?, [ClientMessage::Cancel { stream: id }]);
    assert_eq!(
        answer(out, id),
        Some(Err(Failure::new(CANCELLED, "cancelled by the client")))
    );
    // The gateway's answer and status raced the cancel: nothing more settles.
    client.on_text(&format!(
        r#"{{"type":"pollInfo","stream":{id},"descriptor":{{"cmd":"Ag=="}}}}"#
    ));
    status(&mut client, id, CANCELLED, "cancelled by the client")?;
    assert!(actions(&mut client).is_empty());
    assert!(client.failure().is_none(), "the connection goes on");
    Ok(())
}
