//! The memory budget against a real pyarrow upstream: DoGets whose clients stop granting
//! credit stop at the per-connection, per-client-IP and total budgets, other IPs are
//! still served, the gateway's memory stays within the budget and returns after the
//! connections close, and a stalled connection is closed. Budgets are lowered so that a
//! few clients reach them in seconds.

mod support;

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arrow_array::{Int64Array, RecordBatch};
use quiver::flight::control::{ClientMessage, Descriptor, ServerMessage};
use quiver::flight::frame::{self, Flags, FrameKind};
use quiver::flight::message::Splitter;
use quiver_gateway::config::Limits;
use support::{config, gateway, ids_upload, send_frames, Event, GatewayProcess, Upstream, Ws};
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message;

const MIB: u64 = 1 << 20;

/// What a DoGet opened with 2 MiB of credit reserves: its HTTP/2 stream window.
const WINDOW: u64 = 2 * MIB;

/// Four such windows per connection, two connections' worth per IP, and in all two IPs'
/// worth and three more windows; each with less than a window of slack, for messages in
/// hand (25 KB each) and queued frames (at most 16 of 16 KiB per connection).
const PER_CONNECTION: u64 = 4 * WINDOW + MIB;
const PER_CLIENT: u64 = 2 * 4 * WINDOW + MIB;
const TOTAL: u64 = 2 * 2 * 4 * WINDOW + 3 * WINDOW + 3 * MIB / 2;

/// 25 MB in 25 KB batches, far more than a window.
const TICKET: &str = "data:0:1000:1000";

const RESOURCE_EXHAUSTED: i32 = 8;

fn ip(last: u8) -> IpAddr {
    IpAddr::from([127, 0, 0, last])
}

fn budget_gateway(up: &Upstream) -> GatewayProcess {
    let (conn, client, total) = (
        PER_CONNECTION.to_string(),
        PER_CLIENT.to_string(),
        TOTAL.to_string(),
    );
    GatewayProcess::start(&[
        "--upstream",
        &up.location(),
        "--max-segment-bytes",
        "16384",
        "--credit-window",
        "262144",
        "--max-buffered-bytes",
        &total,
        "--max-buffered-bytes-per-client",
        &client,
        "--max-buffered-bytes-per-connection",
        &conn,
    ])
}

/// A connection from `from` that opened DoGets 1..=n with 2 MiB of credit each and will
/// grant no more. It reads everything it is sent and keeps the statuses.
struct Starved {
    statuses: Arc<Mutex<Vec<(u32, i32, String)>>>,
    reader: JoinHandle<()>,
}

impl Starved {
    async fn open(addr: SocketAddr, from: IpAddr, n: u32) -> Starved {
        let mut ws = Ws::connect_from(addr, None, Some(from))
            .await
            .expect("connect");
        for stream in 1..=n {
            ws.send(ClientMessage::DoGet {
                stream,
                ticket: TICKET.as_bytes().to_vec(),
                location: None,
                credit: Some(WINDOW),
            })
            .await;
        }
        let statuses = Arc::new(Mutex::new(Vec::new()));
        let seen = statuses.clone();
        let reader = tokio::spawn(async move {
            while let Some(event) = ws.next_within(Duration::from_secs(120)).await {
                match event {
                    Event::Json(ServerMessage::Status {
                        stream,
                        code,
                        message,
                        ..
                    }) => seen.lock().unwrap().push((stream, code, message)),
                    Event::Closed(_) => break,
                    _ => {}
                }
            }
        });
        Starved { statuses, reader }
    }

    /// The statuses received so far, once `count` have come (or after 20 s).
    async fn statuses(&self, count: usize) -> Vec<(u32, i32, String)> {
        for _ in 0..200 {
            if self.statuses.lock().unwrap().len() >= count {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        self.statuses.lock().unwrap().clone()
    }
}

/// Checks that `status` refuses a DoGet for `option`'s budget of `limit` bytes, held by
/// `whose`, with the held bytes one window short of the limit or closer.
fn assert_refused(status: &(u32, i32, String), option: &str, whose: &str, limit: u64) {
    let (stream, code, message) = status;
    assert_eq!(*code, RESOURCE_EXHAUSTED, "stream {stream}: {message}");
    let prefix = format!("a DoGet needs {WINDOW} bytes, over the {option} budget: {whose} holds ");
    let suffix = format!(" of its {limit} bytes");
    let held = message
        .strip_prefix(&prefix)
        .and_then(|rest| rest.strip_suffix(&suffix))
        .and_then(|held| held.parse::<u64>().ok())
        .unwrap_or_else(|| {
            panic!("stream {stream}: expected {prefix}<n>{suffix}, found {message}")
        });
    assert!(
        held + WINDOW > limit && held <= limit,
        "stream {stream}: {held} held of {limit}"
    );
}

/// Two IPs that each open three connections of five starved DoGets.
async fn starve_two_ips(addr: SocketAddr) -> Vec<Starved> {
    let mut starved = Vec::new();
    for from in [ip(2), ip(3)] {
        for _ in 0..3 {
            starved.push(Starved::open(addr, from, 5).await);
            // Let the upstream answer before the next connection opens.
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    starved
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credit_starved_streams_stop_at_each_budget_and_other_ips_are_served() {
    let up = Upstream::start(&[]);
    let gw = budget_gateway(&up);
    let before = gw.rss_bytes();

    let starved = starve_two_ips(gw.addr).await;
    for (i, conn) in starved.iter().enumerate() {
        let statuses = conn.statuses(if i % 3 == 2 { 5 } else { 1 }).await;
        if i % 3 < 2 {
            // Four windows fit the connection's budget; the fifth does not.
            assert_eq!(statuses.len(), 1, "connection {i}: {statuses:?}");
            assert_eq!(statuses[0].0, 5, "connection {i}: {statuses:?}");
            let whose = "this connection";
            assert_refused(
                &statuses[0],
                "--max-buffered-bytes-per-connection",
                whose,
                PER_CONNECTION,
            );
        } else {
            // The IP holds two connections' worth: its third connection gets nothing.
            assert_eq!(statuses.len(), 5, "connection {i}: {statuses:?}");
            for status in &statuses {
                let option = "--max-buffered-bytes-per-client";
                assert_refused(status, option, "this client IP", PER_CLIENT);
            }
        }
    }

    // Another IP is served in full beside them.
    let mut fair = Ws::connect_from(gw.addr, None, Some(ip(4)))
        .await
        .expect("connect");
    let expected = fair.reference(1, "data:0:2000:20").await;
    let download = fair.do_get(2, "data:0:2000:20", None).await;
    assert_eq!((download.code, download.message.as_str()), (0, ""));
    assert_eq!(download.batches(), expected);

    // A third IP gets what is left of the total: three windows.
    let last = Starved::open(gw.addr, ip(5), 5).await;
    let statuses = last.statuses(2).await;
    assert_eq!(statuses.len(), 2, "{statuses:?}");
    for status in &statuses {
        assert_refused(status, "--max-buffered-bytes", "the gateway", TOTAL);
    }

    // 19 windows of 2 MiB are held, which the upstream has filled.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let held = gw.rss_bytes().saturating_sub(before);
    // Connections, tasks and buffers the allocator keeps: measured at about 10 MiB.
    let overhead = 24 * MIB;
    assert!(
        held < TOTAL + overhead,
        "the gateway grew by {} MiB with a budget of {} MiB",
        held / MIB,
        TOTAL / MIB
    );
    eprintln!(
        "budget: RSS grew by {} MiB with 19 starved DoGets under a {} MiB budget",
        held / MIB,
        TOTAL / MIB
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_returns_after_starved_connections_close() {
    let up = Upstream::start(&[]);
    let gw = budget_gateway(&up);
    let before = gw.rss_bytes();
    let starved = starve_two_ips(gw.addr).await;
    // The upstream fills the 16 windows (32 MiB) within seconds.
    let mut peak = gw.rss_bytes();
    for _ in 0..100 {
        if peak > before + 24 * MIB {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        peak = gw.rss_bytes();
    }
    assert!(
        peak > before + 24 * MIB,
        "16 starved DoGets of 2 MiB windows made the gateway grow by only {} MiB",
        (peak - before) / MIB
    );
    for conn in &starved {
        conn.reader.abort();
    }
    drop(starved);
    // The allocator gives freed memory back within a second or so (longer on a busy
    // machine).
    let mut after = peak;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        after = gw.rss_bytes();
        if after < before + 12 * MIB {
            break;
        }
    }
    eprintln!(
        "budget: RSS {} MiB before, {} MiB with 16 starved DoGets, {} MiB after they closed",
        before / MIB,
        peak / MIB,
        after / MIB
    );
    assert!(
        after < before + 12 * MIB,
        "RSS was {} MiB before, {} MiB at the peak and {} MiB after every connection closed",
        before / MIB,
        peak / MIB,
        after / MIB
    );
}

/// Opens DoGets 1 to 3 at credit 0, with the ticket `ticket(stream)`: streams that wait
/// for credit the client never grants.
async fn open_starved(ws: &mut Ws, ticket: impl Fn(u32) -> String) {
    for stream in 1..=3 {
        ws.send(ClientMessage::DoGet {
            stream,
            ticket: ticket(stream).into_bytes(),
            location: None,
            credit: Some(0),
        })
        .await;
    }
}

/// A pyarrow upstream, and a client of a gateway over it whose budgets `lower` changes
/// and whose stall timeout is `stall_secs` (two seconds leave a loaded machine's upstream
/// time to start three calls).
async fn stall_gateway(lower: impl FnOnce(&mut Limits), stall_secs: u64) -> (Upstream, Ws) {
    let up = Upstream::start(&[]);
    let mut c = config(&up);
    lower(&mut c.buffer_budget);
    c.stall_timeout = Duration::from_secs(stall_secs);
    let ws = Ws::connect(gateway(c).await, None).await.expect("connect");
    (up, ws)
}

/// Waits for the connection to be closed as stalled over `budget` (frames before are
/// skipped); returns the bytes it held, from the close reason.
async fn stalled_close(ws: &mut Ws, budget: &str) -> u64 {
    let closed = loop {
        match ws.next_within(Duration::from_secs(10)).await {
            Some(Event::Frame { .. } | Event::Json(ServerMessage::Credit { .. })) => continue,
            other => break other,
        }
    };
    match closed {
        Some(Event::Closed(Some((code, reason)))) => {
            assert_eq!(code, 1008);
            let suffix = format!(" bytes with {budget} full, and moved under 65536 bytes in 2 s");
            reason
                .strip_prefix("holds ")
                .and_then(|r| r.strip_suffix(suffix.as_str()))
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or_else(|| panic!("unexpected close reason {reason}"))
        }
        Some(Event::Closed(None)) => panic!("closed without a close frame"),
        Some(_) => panic!("expected the connection to close, got another message"),
        None => panic!("a stalled connection was still open after 10 s"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_connection_is_closed_and_its_calls_cancelled() {
    // Three DoGets at credit 0 reserve 64 KiB windows; with the messages they hold, its
    // client IP's budget has no room for another call. The upstream sends one small
    // batch each, then waits to be cancelled.
    let (up, mut ws) = stall_gateway(|b| b.per_client = 4 << 16, 2).await;
    open_starved(&mut ws, |s| format!("hold:stall{s}")).await;
    let held = stalled_close(&mut ws, "--max-buffered-bytes-per-client").await;
    assert!(held > 3 << 16, "{held}");
    let cancelled: Vec<String> = (1..=3).map(|s| format!("CANCELLED stall{s}")).collect();
    let missing = up.missing(&cancelled, Duration::from_secs(10));
    assert!(missing.is_empty(), "the upstream did not print {missing:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_connection_whose_own_budget_alone_is_full_stays_open() {
    // As above, but only the connection's own budget is full: it keeps nobody else from
    // anything, so a slow reader is left to read at its pace.
    let (up, mut ws) = stall_gateway(|b| b.per_connection = 4 << 16, 1).await;
    open_starved(&mut ws, |s| format!("hold:own{s}")).await;
    let started = std::time::Instant::now();
    while started.elapsed() < Duration::from_secs(4) {
        if let Some(Event::Closed(close)) = ws.next_within(Duration::from_millis(200)).await {
            panic!("closed past the stall timeout with only its own budget full: {close:?}");
        }
    }
    // Its calls were left running, and the connection still takes requests: a cancel
    // sent now reaches the upstream.
    let cancelled = vec!["CANCELLED own1".to_string()];
    assert_eq!(up.missing(&cancelled, Duration::ZERO), cancelled);
    ws.send(ClientMessage::Cancel { stream: 1 }).await;
    let missing = up.missing(&cancelled, Duration::from_secs(10));
    assert!(missing.is_empty(), "the upstream did not print {missing:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_uploads_hold_the_budget_no_longer_than_the_stall_timeout() {
    // Two DoPuts reserve 2 x (64 + 256) KiB, which leaves 60 KiB: no room for a call.
    let (_up, mut ws) = stall_gateway(|b| b.per_client = 700 << 10, 2).await;
    for stream in 1..=2 {
        ws.send(ClientMessage::DoPut {
            stream,
            descriptor: Descriptor::Path(vec![format!("idle{stream}")]),
        })
        .await;
    }
    let held = stalled_close(&mut ws, "--max-buffered-bytes-per-client").await;
    assert!(held >= 2 * (320 << 10), "{held}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_without_room_for_a_default_doget_counts_as_full() {
    // Three DoGets at credit 0 reserve 3 x 64 KiB and hold a small message each, which
    // leaves about 128 KiB: room for a call opened with little credit, not for a DoGet
    // opened with the default credit (a 256 KiB window here), which others are refused.
    let (_up, mut ws) = stall_gateway(|b| b.per_client = 320 << 10, 2).await;
    open_starved(&mut ws, |s| format!("hold:room{s}")).await;
    let held = stalled_close(&mut ws, "--max-buffered-bytes-per-client").await;
    assert!(
        (3 << 16..(320 << 10) - (64 << 10)).contains(&held),
        "{held}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grants_of_a_byte_do_not_keep_a_stalled_connection_open() {
    let (_up, mut ws) = stall_gateway(|b| b.per_client = 4 << 16, 2).await;
    // Streams with more to send than the client will ever grant.
    open_starved(&mut ws, |_| "data:0:2000:50".into()).await;
    // A byte of credit per stream every 200 ms: a client that looks alive, and reads
    // nothing.
    let closed = async {
        let mut tick = tokio::time::interval(Duration::from_millis(200));
        loop {
            tick.tick().await;
            for stream in 1..=3 {
                let grant = ClientMessage::Credit { stream, bytes: 1 };
                ws.try_send_raw(Message::Text(grant.to_json().expect("json").into()))
                    .await;
            }
            while let Some(event) = ws.next_within(Duration::from_millis(100)).await {
                if let Event::Closed(close) = event {
                    return close;
                }
            }
        }
    };
    match tokio::time::timeout(Duration::from_secs(10), closed).await {
        Ok(Some((code, reason))) => {
            assert_eq!(code, 1008, "{reason}");
            assert!(
                reason.ends_with("moved under 65536 bytes in 2 s"),
                "{reason}"
            );
        }
        Ok(None) => panic!("closed without a close frame"),
        Err(_) => panic!("a connection granting a byte at a time was still open after 10 s"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_doput_message_past_the_budget_fails_its_call() {
    let up = Upstream::start(&[]);
    let mut c = config(&up);
    c.buffer_budget.per_connection = 1 << 20;
    let mut ws = Ws::connect(gateway(c).await, None).await.expect("connect");
    // A 1.6 MB batch: its header declares a body the connection's 1 MiB cannot hold.
    let batch = RecordBatch::try_from_iter([(
        "id",
        Arc::new(Int64Array::from_iter_values(0..200_000)) as _,
    )])
    .expect("batch");
    let mut w =
        arrow_ipc::writer::StreamWriter::try_new(Vec::new(), &batch.schema()).expect("writer");
    w.write(&batch).expect("write");
    let ipc = w.into_inner().expect("ipc");
    let mut messages = Vec::new();
    Splitter::new(1 << 30)
        .push(&ipc, &mut messages)
        .expect("split");
    let declared: usize = messages.iter().map(|m| m.header.len() + m.body.len()).sum();

    ws.send(ClientMessage::DoPut {
        stream: 1,
        descriptor: Descriptor::Path(vec!["too-big".into()]),
    })
    .await;
    // DoPut reserves its 64 KiB HTTP/2 window and the 256 KiB it grants.
    let reserved = (64 << 10) + (256 << 10);
    assert!(matches!(
        ws.next().await,
        Event::Json(ServerMessage::Credit { stream: 1, bytes }) if bytes == 256 << 10
    ));
    // The schema, the batch's header and the first bytes of its body.
    let first = frame::encode(
        1,
        FrameKind::Data,
        Flags {
            first: true,
            last: false,
        },
        b"",
        &[&ipc[..60_000]],
    )
    .expect("frame");
    ws.send_raw(Message::Binary(first.into())).await;
    assert_eq!(
        ws.status(1).await,
        (
            RESOURCE_EXHAUSTED,
            format!(
                "a DoPut's message needs {declared} bytes, over the \
                 --max-buffered-bytes-per-connection budget: this connection holds {reserved} \
                 of its 1048576 bytes"
            )
        )
    );
}

/// A gateway whose connections have 1 MiB each, a client of it, and 30 MB of IPC in
/// 300 KB batches: more than a pyarrow server's HTTP/2 window.
async fn small_budget_upload() -> (Upstream, Ws, Vec<u8>) {
    let up = Upstream::start(&[]);
    let mut c = config(&up);
    c.buffer_budget.per_connection = MIB;
    let ws = Ws::connect(gateway(c).await, None).await.expect("connect");
    (up, ws, ids_upload(37_500, 100))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_doput_waits_for_its_sent_messages_to_make_room() {
    // The server reads nothing for 2 s: the messages fill its window and then the
    // gateway's budget, and the upload waits for room instead of failing.
    let (up, mut ws, ipc) = small_budget_upload().await;
    ws.send(ClientMessage::DoPut {
        stream: 1,
        descriptor: Descriptor::Path(vec!["pause-put".into()]),
    })
    .await;
    let sent = send_frames(&mut ws, 1, &ipc, 64 << 10, Duration::from_secs(20)).await;
    assert_eq!(sent, ipc.len());
    ws.send(ClientMessage::End { stream: 1 }).await;
    assert_eq!(ws.status(1).await, (0, String::new()));
    assert!(up.saw("PUT STORED pause-put", Duration::from_secs(10)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doput_messages_on_their_way_to_a_stalled_server_hold_the_budget() {
    // The server reads none of the upload.
    let (up, mut ws, ipc) = small_budget_upload().await;
    ws.send(ClientMessage::DoPut {
        stream: 1,
        descriptor: Descriptor::Path(vec!["stall-put".into()]),
    })
    .await;
    let sent = send_frames(&mut ws, 1, &ipc, 64 << 10, Duration::from_secs(3)).await;
    assert!(sent < ipc.len(), "a stalled server took the whole upload");
    // The messages handed to the upstream call count until it lets them go: with the
    // upload's reservation (320 KiB) and the message waiting for room, the connection's
    // 1 MiB has none left for a call's 64 KiB.
    ws.send(ClientMessage::ListFlights {
        stream: 3,
        criteria: Vec::new(),
    })
    .await;
    let (code, message) = ws.status(3).await;
    assert_eq!(code, RESOURCE_EXHAUSTED, "{message}");
    let prefix = "a call needs 65536 bytes, over the --max-buffered-bytes-per-connection \
                  budget: this connection holds ";
    let held: u64 = message
        .strip_prefix(prefix)
        .and_then(|rest| rest.strip_suffix(" of its 1048576 bytes"))
        .and_then(|held| held.parse().ok())
        .unwrap_or_else(|| panic!("{message}"));
    assert!(held > (320 << 10) + 2 * 300_000, "{held}");
    // Cancelled, the upload gives it all back.
    ws.send(ClientMessage::Cancel { stream: 1 }).await;
    assert_eq!(ws.status(1).await.0, 1);
    assert!(up.saw("PUT FAILED stall-put", Duration::from_secs(10)));
    ws.send(ClientMessage::ListFlights {
        stream: 5,
        criteria: Vec::new(),
    })
    .await;
    assert_eq!(ws.status(5).await.0, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_answer_past_the_budget_fails_its_call() {
    let up = Upstream::start(&[]);
    let mut c = config(&up);
    c.buffer_budget.per_connection = MIB;
    let mut ws = Ws::connect(gateway(c).await, None).await.expect("connect");
    // The IPC of 100,000 rows, about 2.5 MB as one action result.
    let dump = |stream, ticket: &str| ClientMessage::DoAction {
        stream,
        action: "dump".into(),
        body: ticket.as_bytes().to_vec(),
    };
    ws.send(dump(1, "data:0:100000:1")).await;
    let (code, message) = ws.status(1).await;
    assert_eq!(code, RESOURCE_EXHAUSTED, "{message}");
    assert!(
        message.starts_with("a call's answer needs ")
            && message.ends_with(
                " bytes, over the --max-buffered-bytes-per-connection budget: \
                                  this connection holds 65536 of its 1048576 bytes"
            ),
        "{message}"
    );
    // One that fits still comes.
    ws.send(dump(3, "data:0:1000:1")).await;
    assert_eq!(ws.status(3).await, (0, String::new()));
}
