//! The gateway against real `pyarrow.flight` servers, all on 127.0.0.1.

mod support;

use std::time::Duration;

use arrow_array::Int64Array;
use arrow_ipc::CompressionType;
use quiver::flight::control::{ClientMessage, Descriptor, ServerMessage};
use quiver::flight::frame::{self, Flags, FrameKind};
use quiver::flight::message::{Splitter, EOS};
use quiver_gateway::Config;
use support::{config, gateway, send_frames, Event, UndialledUpstream, Upstream, Ws, WAIT};
use tokio_tungstenite::tungstenite::Message;

const TICKET: &str = "data:0:20000:5";

/// The codecs of the record batch messages in an IPC stream.
fn codecs(ipc: &[u8]) -> Vec<Option<CompressionType>> {
    let mut messages = Vec::new();
    Splitter::new(1 << 30)
        .push(ipc, &mut messages)
        .expect("split");
    messages
        .iter()
        .filter_map(|m| {
            let msg = arrow_ipc::root_as_message(&m.header).expect("message");
            msg.header_as_record_batch()
                .map(|b| b.compression().map(|c| c.codec()))
        })
        .collect()
}

async fn doget_equals_pyarrow(compression: &str, codec: Option<CompressionType>) {
    let up = Upstream::start(&["--compression", compression]);
    let addr = gateway(config(&up)).await;
    let mut ws = Ws::connect(addr, None).await.expect("connect");
    let expected = ws.reference(1, TICKET).await;
    let got = ws.do_get(2, TICKET, None).await;
    assert_eq!((got.code, got.message.as_str()), (0, ""));
    assert!(got.ipc.ends_with(&EOS), "a complete stream ends with EOS");
    assert!(
        got.largest_frame <= 64 << 10,
        "frames respect the segment cap"
    );
    assert!(
        got.frames > 5,
        "batches span several frames: {}",
        got.frames
    );
    assert_eq!(codecs(&got.ipc), vec![codec; 5]);
    assert_eq!(got.batches(), expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doget_uncompressed() {
    doget_equals_pyarrow("none", None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doget_lz4() {
    doget_equals_pyarrow("lz4", Some(CompressionType::LZ4_FRAME)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doget_zstd() {
    doget_equals_pyarrow("zstd", Some(CompressionType::ZSTD)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_endpoint_across_two_servers() {
    let b = Upstream::start(&[]);
    let a = Upstream::start(&["--peer", &b.location()]);
    let mut cfg = config(&a);
    cfg.allow_locations = vec![b.location()];
    let mut ws = Ws::connect(gateway(cfg).await, None)
        .await
        .expect("connect");
    ws.send(ClientMessage::GetFlightInfo {
        stream: 1,
        descriptor: Descriptor::Path(vec!["parts".into()]),
    })
    .await;
    let info = match ws.next().await {
        Event::Json(ServerMessage::FlightInfo { info, .. }) => info,
        _ => panic!("expected flightInfo"),
    };
    assert_eq!(ws.status(1).await.0, 0);
    assert_eq!(info.endpoints.len(), 2);
    assert!(
        info.schema.starts_with(&[0xFF; 4]),
        "schema is encapsulated"
    );
    // Both partitions stream at once on one socket.
    for (i, e) in info.endpoints.iter().enumerate() {
        ws.send(ClientMessage::DoGet {
            stream: 10 + i as u32,
            ticket: e.ticket.clone(),
            location: e.locations.first().cloned(),
            credit: None,
        })
        .await;
    }
    let mut got = ws.collect(&[10, 11]).await;
    for (i, e) in info.endpoints.iter().enumerate() {
        let ticket = String::from_utf8(e.ticket.clone()).expect("utf8");
        let expected = ws.reference(20 + i as u32, &ticket).await;
        let d = got.remove(&(10 + i as u32)).expect("download");
        assert_eq!(d.code, 0, "{}", d.message);
        assert_eq!(d.batches(), expected, "partition {i}");
    }
}

/// Sends an IPC stream as DoPut frames of at most `segment` bytes, within credit, and
/// ends the upload.
async fn upload(ws: &mut Ws, stream: u32, ipc: &[u8], segment: usize) {
    send_messages(ws, stream, ipc, segment).await;
    ws.send(ClientMessage::End { stream }).await;
}

/// The frames of [`upload`], without the `end`.
async fn send_messages(ws: &mut Ws, stream: u32, ipc: &[u8], segment: usize) {
    let sent = send_frames(ws, stream, ipc, segment, WAIT).await;
    let messages = ipc.len() - if ipc.ends_with(&EOS) { EOS.len() } else { 0 };
    assert_eq!(
        sent, messages,
        "the gateway granted credit for the whole upload"
    );
}

/// The IPC stream of `data:0:ROWS:BATCHES` from the upstream (schema, batches, no
/// end-of-stream marker), read on `stream`.
async fn ipc_of(ws: &mut Ws, stream: u32, ticket: &str) -> Vec<u8> {
    let batches = ws.reference(stream, ticket).await;
    let mut w =
        arrow_ipc::writer::StreamWriter::try_new(Vec::new(), &batches[0].schema()).expect("writer");
    for b in &batches {
        w.write(b).expect("write");
    }
    w.flush().expect("flush");
    w.into_inner().expect("bytes")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doput_round_trip() {
    let up = Upstream::start(&[]);
    let mut cfg = config(&up);
    cfg.credit_window = 100 << 10;
    let mut ws = Ws::connect(gateway(cfg).await, None)
        .await
        .expect("connect");
    let batches = ws.reference(1, "data:3:30000:3").await;
    let mut w =
        arrow_ipc::writer::StreamWriter::try_new(Vec::new(), &batches[0].schema()).expect("writer");
    for b in &batches {
        w.write(b).expect("write");
    }
    w.finish().expect("finish");
    let ipc = w.into_inner().expect("bytes");
    assert!(
        ipc.len() > 1 << 20,
        "the upload outgrows the 100 KiB window"
    );
    ws.send(ClientMessage::DoPut {
        stream: 2,
        descriptor: Descriptor::Path(vec!["uploaded".into()]),
    })
    .await;
    upload(&mut ws, 2, &ipc, 64 << 10).await;
    let mut acks = Vec::new();
    loop {
        match ws.next().await {
            Event::Json(ServerMessage::PutResult { app_metadata, .. }) => acks.push(app_metadata),
            Event::Json(ServerMessage::Status {
                stream: 2,
                code,
                message,
                ..
            }) => {
                assert_eq!(code, 0, "{message}");
                break;
            }
            _ => {}
        }
    }
    // pyarrow saw the app_metadata of each batch (the schema's is not surfaced).
    assert_eq!(
        acks,
        [
            b"stored 90000 rows".to_vec(),
            b"message 1,message 2,message 3".to_vec()
        ]
    );
    let back = ws.do_get(3, "put:uploaded", None).await;
    assert_eq!(back.code, 0, "{}", back.message);
    let rows: usize = back.batches().iter().map(|b| b.num_rows()).sum();
    assert_eq!(rows, 90000);
    assert_eq!(
        arrow_select_concat(&back.batches()),
        arrow_select_concat(&batches)
    );
}

/// All values of the `id` column, so that differently chunked data compares equal.
fn arrow_select_concat(batches: &[arrow_array::RecordBatch]) -> Vec<i64> {
    batches
        .iter()
        .flat_map(|b| {
            let ids = b
                .column(0)
                .as_any()
                .downcast_ref::<Int64Array>()
                .expect("int64 ids");
            ids.values().to_vec()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doget_app_metadata_rides_with_its_batch() {
    let up = Upstream::start(&[]);
    let mut ws = Ws::to_gateway_for(&up).await;
    let d = ws.do_get(1, "meta:3", None).await;
    assert_eq!(d.code, 0, "{}", d.message);
    assert_eq!(
        d.app_metadata,
        [b"m0".to_vec(), b"m1".to_vec(), b"m2".to_vec()]
    );
    assert_eq!(d.batches().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_doput_bytes_fail_the_stream_not_the_connection() {
    let up = Upstream::start(&[]);
    let mut ws = Ws::to_gateway_for(&up).await;
    ws.send(ClientMessage::DoPut {
        stream: 1,
        descriptor: Descriptor::Path(vec!["bad".into()]),
    })
    .await;
    let garbage = frame::encode(1, FrameKind::Data, Flags::WHOLE, b"", &[&[7; 16]]).expect("frame");
    ws.send_raw(Message::Binary(garbage.into())).await;
    assert_eq!(
        ws.status(1).await,
        (
            3,
            "IPC message must start with continuation marker 0xFFFFFFFF, found 0x07070707"
                .to_string()
        )
    );
    // The upload was cancelled, not completed: nothing was stored.
    let d = ws.do_get(2, "put:bad", None).await;
    assert_ne!(d.code, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_doput_refused_before_its_upload_is_read_gets_the_servers_status() {
    let up = Upstream::start(&[]);
    let mut ws = Ws::to_gateway_for(&up).await;
    // Flight SQL servers refuse a command this way. The race of the answer with the
    // gateway's forwarding is tested in `doput`'s unit tests; this is the whole path.
    for stream in 1..=10 {
        ws.send(ClientMessage::DoPut {
            stream,
            descriptor: Descriptor::Path(vec!["refused".into()]),
        })
        .await;
        ws.send(ClientMessage::End { stream }).await;
        let (code, message) = ws.status(stream).await;
        assert_eq!(code, 12, "stream {stream}: {message}");
        assert!(
            message.contains("uploads to refused are not implemented"),
            "{message}"
        );
    }
}

/// An upload that stops early, after whole messages, reaches the server as a cancelled
/// call: the server must not store the batches that did arrive as if they were all.
async fn abandoned_upload_stores_nothing(
    name: &str,
    stop: impl AsyncFnOnce(&mut Ws),
) -> (i32, String) {
    let up = Upstream::start(&[]);
    let mut ws = Ws::to_gateway_for(&up).await;
    let ipc = ipc_of(&mut ws, 1, "data:0:1000:2").await;
    ws.send(ClientMessage::DoPut {
        stream: 2,
        descriptor: Descriptor::Path(vec![name.into()]),
    })
    .await;
    send_messages(&mut ws, 2, &ipc, 64 << 10).await;
    assert!(up.saw(&format!("PUT BATCH {name} 1"), Duration::from_secs(10)));
    stop(&mut ws).await;
    let status = ws.status(2).await;
    assert!(
        up.saw(&format!("PUT FAILED {name}"), Duration::from_secs(10)),
        "the upstream call ended cancelled, not complete"
    );
    let d = ws.do_get(3, &format!("put:{name}"), None).await;
    assert_ne!(
        d.code,
        0,
        "nothing was stored, found {} batches",
        d.batches().len()
    );
    status
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_bytes_after_whole_messages_store_nothing() {
    let status = abandoned_upload_stores_nothing("bad-late", async |ws: &mut Ws| {
        let garbage =
            frame::encode(2, FrameKind::Data, Flags::WHOLE, b"", &[&[7; 16]]).expect("frame");
        ws.send_raw(Message::Binary(garbage.into())).await;
    })
    .await;
    assert_eq!(status.0, 3, "{}", status.1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn app_metadata_with_an_end_of_stream_marker_is_refused() {
    let status = abandoned_upload_stores_nothing("lost-metadata", async |ws: &mut Ws| {
        let eos = frame::encode(2, FrameKind::Data, Flags::WHOLE, b"lost", &[&EOS]).expect("frame");
        ws.send_raw(Message::Binary(eos.into())).await;
    })
    .await;
    assert_eq!(
        status,
        (
            3,
            "app_metadata of 4 bytes came with IPC bytes that complete no message".into()
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_doput_stores_nothing() {
    let status = abandoned_upload_stores_nothing("cancelled", async |ws: &mut Ws| {
        ws.send(ClientMessage::Cancel { stream: 2 }).await;
    })
    .await;
    assert_eq!(status, (1, "cancelled by the client".to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doput_beyond_credit_is_a_protocol_error() {
    let up = Upstream::start(&[]);
    let mut cfg = config(&up);
    cfg.credit_window = 1000;
    let mut ws = Ws::connect(gateway(cfg).await, None)
        .await
        .expect("connect");
    ws.send(ClientMessage::DoPut {
        stream: 1,
        descriptor: Descriptor::Path(vec!["x".into()]),
    })
    .await;
    let big =
        frame::encode(1, FrameKind::Data, Flags::default(), b"", &[&[0xFF; 2000]]).expect("frame");
    ws.send_raw(Message::Binary(big.into())).await;
    loop {
        match ws.next().await {
            Event::Json(ServerMessage::Error { message }) => {
                assert_eq!(
                    message,
                    "frame of 2000 bytes exceeds the remaining credit of 1000 bytes"
                );
                break;
            }
            Event::Closed(_) => panic!("closed without an error message"),
            _ => {}
        }
    }
    assert!(matches!(ws.next().await, Event::Closed(Some((1002, _)))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_token_is_unauthenticated() {
    let up = Upstream::start(&["--token", "s3cret"]);
    let mut cfg = config(&up);
    cfg.token = Some("s3cret".into());
    let mut ws = Ws::connect(gateway(cfg).await, None)
        .await
        .expect("connect");
    // No token: the gateway refuses before dialling.
    let d = ws.do_get(1, "data:0:10:1", None).await;
    assert_eq!(
        (d.code, d.message.as_str()),
        (16, "missing or wrong bearer token (send an auth message)")
    );
    ws.send(ClientMessage::Auth {
        token: "wrong".into(),
    })
    .await;
    assert_eq!(ws.do_get(2, "data:0:10:1", None).await.code, 16);
    ws.send(ClientMessage::Auth {
        token: "s3cret".into(),
    })
    .await;
    let ok = ws.do_get(3, "data:0:10:1", None).await;
    assert_eq!(ok.code, 0, "{}", ok.message);
    assert_eq!(ok.batches()[0].num_rows(), 10);

    // A gateway without its own token forwards the client's; pyarrow refuses it.
    let mut ws = Ws::to_gateway_for(&up).await;
    ws.send(ClientMessage::Auth {
        token: "wrong".into(),
    })
    .await;
    let d = ws.do_get(1, "data:0:10:1", None).await;
    assert_eq!(d.code, 16, "{}", d.message);
    assert!(
        d.message.contains("bad or missing bearer token"),
        "{}",
        d.message
    );
}

/// The request headers pyarrow saw on a call (its "headers" action), by name.
async fn upstream_headers(ws: &mut Ws, stream: u32) -> serde_json::Map<String, serde_json::Value> {
    ws.send(ClientMessage::DoAction {
        stream,
        action: "headers".into(),
        body: Vec::new(),
    })
    .await;
    let body = match ws.next().await {
        Event::Json(ServerMessage::Result { body, .. }) => body,
        _ => panic!("expected the headers action's result"),
    };
    assert_eq!(ws.status(stream).await, (0, String::new()));
    serde_json::from_slice(&body).expect("headers JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_listed_upgrade_headers_reach_the_upstream() {
    let up = Upstream::start(&[]);
    let mut cfg = config(&up);
    cfg.forward_headers = vec!["x-user".parse().unwrap(), "authorization".parse().unwrap()];
    let url = format!("ws://{}/flight", gateway(cfg).await);
    let headers = [
        ("X-User", "alice"),
        ("x-other", "not listed"),
        ("cookie", "session=s3cret"),
        ("authorization", "Bearer from-the-proxy"),
    ];
    let mut ws = Ws::connect_with(&url, &headers, None)
        .await
        .expect("connect");
    let seen = upstream_headers(&mut ws, 1).await;
    assert_eq!(seen["x-user"], serde_json::json!(["alice"]));
    assert_eq!(
        seen["authorization"],
        serde_json::json!(["Bearer from-the-proxy"])
    );
    assert!(!seen.contains_key("x-other"), "{seen:?}");
    assert!(!seen.contains_key("cookie"), "{seen:?}");

    // The auth message's token replaces a forwarded authorization.
    ws.send(ClientMessage::Auth {
        token: "from-the-client".into(),
    })
    .await;
    let seen = upstream_headers(&mut ws, 2).await;
    assert_eq!(
        seen["authorization"],
        serde_json::json!(["Bearer from-the-client"])
    );
    assert_eq!(seen["x-user"], serde_json::json!(["alice"]));

    // A gateway with no list forwards nothing.
    let url = format!("ws://{}/flight", gateway(config(&up)).await);
    let mut ws = Ws::connect_with(&url, &headers, None)
        .await
        .expect("connect");
    let seen = upstream_headers(&mut ws, 1).await;
    assert!(!seen.contains_key("x-user"), "{seen:?}");
    assert!(!seen.contains_key("authorization"), "{seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_of_other_than_visible_ascii_are_refused_before_dialling() {
    let upstream = UndialledUpstream::bind();
    let mut ws = Ws::connect(gateway(Config::new(upstream.location.clone())).await, None)
        .await
        .expect("connect");
    for (stream, token, found) in [
        (1, "tökén", "byte 0xC3 at index 1"),
        (2, "two words", "byte 0x20 at index 3"),
        (3, "line\r\nbreak", "byte 0x0D at index 4"),
        (4, "nul\0", "byte 0x00 at index 3"),
        (5, "del\x7f", "byte 0x7F at index 3"),
    ] {
        ws.send(ClientMessage::Auth {
            token: token.into(),
        })
        .await;
        let d = ws.do_get(stream, "data:0:10:1", None).await;
        let expected = format!("token must be visible ASCII (0x21 to 0x7E), found {found}");
        assert_eq!((d.code, d.message), (3, expected), "{token:?}");
    }
    upstream.assert_never_dialled();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_refuses_connections_is_unavailable() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let cfg = Config::new(format!("grpc://127.0.0.1:{port}"));
    let mut ws = Ws::connect(gateway(cfg).await, None)
        .await
        .expect("connect");
    // tonic's own UNAVAILABLE keeps its message: the connection was never made, not lost.
    let d = ws.do_get(1, "data:0:10:1", None).await;
    assert_eq!((d.code, d.message.as_str()), (14, "tcp connect error"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_error_text_reaches_browsers_without_its_traceback() {
    let up = Upstream::start(&[]);
    let mut ws = Ws::to_gateway_for(&up).await;
    // pyarrow sends a Python exception's traceback after ". Detail: ".
    let d = ws.do_get(1, "raise:no table named t", None).await;
    assert_eq!((d.code, d.message.as_str()), (3, "no table named t..."));
    // Long text is cut to 512 bytes, "..." included, on a character boundary.
    let d = ws
        .do_get(2, &format!("raise:{}", "é".repeat(400)), None)
        .await;
    assert_eq!(d.message, format!("{}...", "é".repeat(254)));
    // pyarrow appends a FlightServerError's detail too: ". Detail: Failed".
    let d = ws.do_get(3, "fail:0", None).await;
    assert_eq!((d.code, d.message.as_str()), (2, "boom after 0 batches..."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_after_three_batches_is_an_error() {
    let up = Upstream::start(&[]);
    let mut ws = Ws::to_gateway_for(&up).await;
    let d = ws.do_get(1, "fail:3", None).await;
    assert_ne!(d.code, 0);
    assert!(d.message.contains("boom after 3 batches"), "{}", d.message);
    assert!(
        !d.ipc.ends_with(&EOS),
        "no end-of-stream marker on an error"
    );
    assert_eq!(d.batches().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_cancel_cancels_upstream() {
    let up = Upstream::start(&[]);
    let mut ws = Ws::to_gateway_for(&up).await;
    ws.start_do_get(1, "slow:cancel", None).await;
    ws.first_frame(1).await;
    ws.send(ClientMessage::Cancel { stream: 1 }).await;
    assert_eq!(
        ws.status(1).await,
        (1, "cancelled by the client".to_string())
    );
    assert!(up.saw("CANCELLED cancel", Duration::from_secs(10)));
    // The connection stays usable.
    assert_eq!(ws.do_get(2, "data:0:10:1", None).await.code, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disconnect_cancels_upstream() {
    let up = Upstream::start(&[]);
    let mut ws = Ws::to_gateway_for(&up).await;
    ws.start_do_get(1, "slow:gone", None).await;
    ws.first_frame(1).await;
    drop(ws);
    assert!(up.saw("CANCELLED gone", Duration::from_secs(10)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn origins_are_checked() {
    let up = Upstream::start(&[]);
    let mut cfg = config(&up);
    cfg.allow_origins = vec!["http://app.example".into()];
    let addr = gateway(cfg).await;
    match Ws::connect(addr, Some("http://evil.example")).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(r)) => assert_eq!(r.status(), 403),
        Err(e) => panic!("expected 403, got {e}"),
        Ok(_) => panic!("a forbidden Origin was accepted"),
    }
    Ws::connect(addr, Some("http://app.example"))
        .await
        .expect("listed origin");
    Ws::connect(addr, Some(&format!("http://{addr}")))
        .await
        .expect("same origin");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forbidden_location_is_not_dialled() {
    let up = Upstream::start(&[]);
    let trap = UndialledUpstream::bind();
    let trap_location = trap.location.clone();
    let mut ws = Ws::to_gateway_for(&up).await;
    ws.send(ClientMessage::GetFlightInfo {
        stream: 1,
        descriptor: Descriptor::Path(vec!["forbidden".into(), trap_location.clone()]),
    })
    .await;
    let info = match ws.next().await {
        Event::Json(ServerMessage::FlightInfo { info, .. }) => info,
        _ => panic!("expected flightInfo"),
    };
    let e = &info.endpoints[0];
    assert_eq!(e.locations, std::slice::from_ref(&trap_location));
    let d = ws
        .do_get(2, "data:0:10:1", e.locations.first().cloned())
        .await;
    assert_eq!(d.code, 7, "PERMISSION_DENIED");
    assert_eq!(
        d.message,
        format!("location {trap_location} is not in the gateway's allowed locations")
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    trap.assert_never_dialled();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_over_8mb_passes() {
    let up = Upstream::start(&[]);
    let mut ws = Ws::to_gateway_for(&up).await;
    let d = ws.do_get(1, "big", None).await;
    assert_eq!(d.code, 0, "{}", d.message);
    assert!(d.ipc.len() > 12_000_000);
    let batches = d.batches();
    assert_eq!(batches.len(), 1);
    assert_eq!(
        arrow_select_concat(&batches),
        (0..1_500_000).collect::<Vec<i64>>()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credit_bounds_what_is_sent() {
    let up = Upstream::start(&[]);
    let mut ws = Ws::to_gateway_for(&up).await;
    ws.send(ClientMessage::DoGet {
        stream: 1,
        ticket: TICKET.as_bytes().to_vec(),
        location: None,
        credit: Some(100_000),
    })
    .await;
    let mut received = 0usize;
    // Without further grants the gateway must stop at exactly the credit.
    while received < 100_000 {
        if let Event::Frame {
            app_metadata, ipc, ..
        } = ws.next().await
        {
            received += app_metadata.len() + ipc.len();
        }
    }
    assert_eq!(received, 100_000);
    let quiet = tokio::time::timeout(Duration::from_millis(500), ws.next()).await;
    assert!(quiet.is_err(), "nothing is sent without credit");
    ws.send(ClientMessage::Credit {
        stream: 1,
        bytes: 1 << 30,
    })
    .await;
    assert_eq!(ws.status(1).await.0, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_frames_close_only_their_connection() {
    let up = Upstream::start(&[]);
    let addr = gateway(config(&up)).await;
    let mut healthy = Ws::connect(addr, None).await.expect("connect");
    healthy.start_do_get(1, TICKET, None).await;
    let cases: Vec<(Message, &str)> = vec![
        (
            Message::Binary(vec![1, 2, 3].into()),
            "frame needs a 12-byte header, found 3 bytes",
        ),
        (
            Message::Binary(
                frame::encode(9, FrameKind::Data, Flags::WHOLE, b"", &[b"x"])
                    .expect("frame")
                    .into(),
            ),
            "stream 9 was never opened",
        ),
        (
            Message::Text("{\"type\":\"credit\",\"stream\":1,\"bytes\":1}".into()),
            "stream 1 was never opened",
        ),
        (
            Message::Text("not json".into()),
            "control message is not valid: expected ident at line 1 column 2",
        ),
        (
            Message::Binary(
                frame::encode(
                    1,
                    FrameKind::Data,
                    Flags::WHOLE,
                    b"",
                    &[&[0; (64 << 10) + 1]],
                )
                .expect("frame")
                .into(),
            ),
            "frame payload is 65537 bytes, the limit is 65536",
        ),
        (
            Message::Binary(vec![0u8; 1 << 20].into()),
            "Space limit exceeded: Message too long: 1048576 > 131084",
        ),
    ];
    for (bad, expected) in cases {
        let mut ws = Ws::connect(addr, None).await.expect("connect");
        ws.send_raw(bad).await;
        match ws.next().await {
            Event::Json(ServerMessage::Error { message }) => assert_eq!(message, expected),
            _ => panic!("expected an error message for {expected}"),
        }
        match ws.next().await {
            Event::Closed(Some((code, _))) => assert_eq!(code, 1002),
            // The gateway stops reading an oversize message, so the rest of it can make
            // the kernel reset the socket before the close frame is read.
            Event::Closed(None) if expected.starts_with("Space limit") => {}
            _ => panic!("expected close 1002 after {expected}"),
        }
    }
    // Credit overflow on an open stream.
    let mut ws = Ws::connect(addr, None).await.expect("connect");
    ws.send(ClientMessage::DoGet {
        stream: 1,
        ticket: b"slow:overflow".to_vec(),
        location: None,
        credit: Some(0),
    })
    .await;
    ws.send(ClientMessage::Credit {
        stream: 1,
        bytes: u64::MAX,
    })
    .await;
    loop {
        match ws.next().await {
            Event::Json(ServerMessage::Error { message }) => {
                assert_eq!(message, "credit grant of 18446744073709551615 bytes would raise the balance above 1099511627776");
                break;
            }
            Event::Closed(_) => panic!("closed without an error message"),
            _ => {}
        }
    }
    let d = healthy.collect(&[1]).await.remove(&1).expect("download");
    assert_eq!(
        d.code, 0,
        "the other connection is unaffected: {}",
        d.message
    );
    assert_eq!(d.batches().len(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_limit_and_idle_timeout() {
    let up = Upstream::start(&[]);
    let mut cfg = config(&up);
    cfg.max_streams = 1;
    cfg.idle_timeout = Duration::from_millis(600);
    cfg.ping_interval = Duration::from_millis(200);
    let mut ws = Ws::connect(gateway(cfg).await, None)
        .await
        .expect("connect");
    for stream in [1, 2] {
        ws.send(ClientMessage::DoGet {
            stream,
            ticket: b"slow:limit".to_vec(),
            location: None,
            credit: None,
        })
        .await;
    }
    assert_eq!(
        ws.status(2).await,
        (8, "at most 1 concurrent streams per connection".to_string())
    );
    ws.send(ClientMessage::Cancel { stream: 1 }).await;
    assert_eq!(ws.status(1).await.0, 1);
    let started = std::time::Instant::now();
    loop {
        match ws.next().await {
            Event::Closed(Some((code, reason))) => {
                assert_eq!((code, reason.as_str()), (1000, "idle timeout"));
                break;
            }
            Event::Closed(None) => panic!("closed without a reason"),
            _ => assert!(started.elapsed() < WAIT),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_calls_reach_pyarrow() {
    let up = Upstream::start(&[]);
    let mut ws = Ws::to_gateway_for(&up).await;
    let parts = || Descriptor::Path(vec!["parts".into()]);
    ws.send(ClientMessage::ListFlights {
        stream: 1,
        criteria: vec![],
    })
    .await;
    let Event::Json(ServerMessage::FlightInfo { info, .. }) = ws.next().await else {
        panic!("expected flightInfo");
    };
    assert_eq!(info.descriptor, Some(parts()));
    assert_eq!(ws.status(1).await.0, 0);

    ws.send(ClientMessage::GetSchema {
        stream: 2,
        descriptor: parts(),
    })
    .await;
    let Event::Json(ServerMessage::Schema { schema, .. }) = ws.next().await else {
        panic!("expected schema");
    };
    assert_eq!(schema, info.schema, "both are the encapsulated schema");
    let reader = arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(&schema), None)
        .expect("schema");
    let names: Vec<_> = reader
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(names, ["id", "value", "name"]);
    assert_eq!(ws.status(2).await.0, 0);

    ws.send(ClientMessage::ListActions { stream: 3 }).await;
    let Event::Json(ServerMessage::ActionType { name, .. }) = ws.next().await else {
        panic!("expected actionType");
    };
    assert_eq!(name, "dump");
    assert_eq!(ws.status(3).await.0, 0);

    // pyarrow implements neither (no auth handler, no PollFlightInfo): its answer passes.
    for (stream, request) in [
        (
            4,
            ClientMessage::Handshake {
                stream: 4,
                payload: b"hi".to_vec(),
            },
        ),
        (
            5,
            ClientMessage::PollFlightInfo {
                stream: 5,
                descriptor: parts(),
            },
        ),
    ] {
        ws.send(request).await;
        assert_eq!(ws.status(stream).await.0, 12, "UNIMPLEMENTED");
    }
    ws.send(ClientMessage::DoAction {
        stream: 6,
        action: "nope".into(),
        body: vec![],
    })
    .await;
    let (code, message) = ws.status(6).await;
    assert_eq!(code, 2);
    assert!(message.contains("unknown action nope"), "{message}");
}

/// Reads until the connection closes, for at most `WAIT`; returns its close frame and the
/// protocol error message the gateway sent before it, if any.
async fn until_closed(ws: &mut Ws) -> (Option<(u16, String)>, Option<String>) {
    let mut error = None;
    let read = async {
        loop {
            match ws.next().await {
                Event::Json(ServerMessage::Error { message }) => error = Some(message),
                Event::Closed(frame) => return frame,
                _ => {}
            }
        }
    };
    let frame = tokio::time::timeout(WAIT, read)
        .await
        .expect("the gateway closes the connection");
    (frame, error)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_may_follow_the_end_of_an_upload() {
    // An upstream that accepts connections but never answers holds the upload open, so
    // the second end cannot race the upload's finish (a finished stream's late messages
    // are dropped, not refused).
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let upstream = format!("grpc://{}", silent.local_addr().expect("addr"));
    let mut ws = Ws::connect(gateway(Config::new(upstream)).await, None)
        .await
        .expect("connect");
    ws.send(ClientMessage::DoPut {
        stream: 1,
        descriptor: Descriptor::Path(vec!["twice".into()]),
    })
    .await;
    ws.send(ClientMessage::End { stream: 1 }).await;
    ws.send(ClientMessage::End { stream: 1 }).await;
    let (frame, error) = until_closed(&mut ws).await;
    assert_eq!(
        error.as_deref(),
        Some("DoPut stream 1 has ended: no frame or end may follow its end")
    );
    assert_eq!(frame.map(|f| f.0), Some(1002));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frames_waiting_for_the_upstream_are_bounded_in_number() {
    // An upstream that accepts connections and never answers takes a first message of
    // almost 1 MiB only in part (HTTP/2 flow control), and nothing after it: from then on
    // frames wait in the gateway. Empty metadata frames cost no credit, so only their
    // count bounds them, one per 256 bytes of the window: 4096.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let mut cfg = Config::new(format!("grpc://{}", silent.local_addr().expect("addr")));
    cfg.credit_window = 1 << 20;
    let mut ws = Ws::connect(gateway(cfg).await, None)
        .await
        .expect("connect");
    ws.send(ClientMessage::DoPut {
        stream: 1,
        descriptor: Descriptor::Path(vec!["many".into()]),
    })
    .await;
    let big =
        frame::encode(1, FrameKind::Metadata, Flags::WHOLE, &[1; 1000 << 10], &[]).expect("frame");
    ws.send_raw(Message::Binary(big.into())).await;
    let empty = frame::encode(1, FrameKind::Metadata, Flags::WHOLE, b"", &[]).expect("frame");
    for _ in 0..4096 {
        ws.send_raw(Message::Binary(empty.clone().into())).await;
    }
    // They fit: the connection goes on, and opens the next upload.
    ws.send(ClientMessage::DoPut {
        stream: 2,
        descriptor: Descriptor::Path(vec!["next".into()]),
    })
    .await;
    loop {
        match ws.next().await {
            Event::Json(ServerMessage::Credit { stream: 2, .. }) => break,
            Event::Json(ServerMessage::Credit { stream: 1, .. }) => {}
            Event::Json(other) => panic!("expected the second upload's credit, got {other:?}"),
            Event::Closed(frame) => panic!("closed after 4096 empty frames: {frame:?}"),
            Event::Frame { .. } => panic!("expected the second upload's credit, got a frame"),
        }
    }
    // Besides the queue, the upload task holds a few frames on their way to the upstream
    // call (its request stream's channel): a dozen more cannot all fit.
    for _ in 0..12 {
        if !ws.try_send_raw(Message::Binary(empty.clone().into())).await {
            break;
        }
    }
    let (frame, error) = until_closed(&mut ws).await;
    assert_eq!(
        error.as_deref(),
        Some("DoPut stream 1 has 4096 frames waiting for the upstream; send fewer, larger frames")
    );
    assert_eq!(frame.map(|f| f.0), Some(1002));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_sends_but_never_reads_is_closed() {
    let up = Upstream::start(&[]);
    let mut cfg = config(&up);
    cfg.ping_interval = Duration::from_millis(200);
    let mut ws = Ws::connect(gateway(cfg).await, None)
        .await
        .expect("connect");
    // Far more than the socket buffers hold, with the credit to send it all.
    ws.send(ClientMessage::DoGet {
        stream: 1,
        ticket: b"data:0:20000:100".to_vec(),
        location: None,
        credit: Some(1 << 30),
    })
    .await;
    // The client keeps talking (each message is heard) but reads nothing for 3 s, five
    // times what the watchdog allows a writer to stall while messages wait.
    for _ in 0..30 {
        ws.send(ClientMessage::Auth {
            token: "still here".into(),
        })
        .await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Then it reads: what was buffered, and the end of the connection, not of the stream.
    loop {
        match ws.next().await {
            Event::Closed(frame) => {
                assert!(
                    matches!(&frame, None | Some((1000, _))),
                    "closed with {frame:?}"
                );
                break;
            }
            Event::Json(ServerMessage::Status { stream: 1, .. }) => {
                panic!("the whole stream was delivered: the connection stayed open")
            }
            _ => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_service_stores_an_upload_and_replays_it() {
    let gw = support::GatewayProcess::start(&["--demo"]);
    let mut ws = Ws::connect(gw.addr, None).await.expect("connect");
    let original = ws.do_get(1, "rows=1000&batches=3", None).await.batches();
    let mut w = arrow_ipc::writer::StreamWriter::try_new(Vec::new(), &original[0].schema())
        .expect("writer");
    for b in &original {
        w.write(b).expect("write");
    }
    w.finish().expect("finish");
    let ipc = w.into_inner().expect("bytes");
    ws.send(ClientMessage::DoPut {
        stream: 3,
        descriptor: Descriptor::Path(vec!["kept".into()]),
    })
    .await;
    upload(&mut ws, 3, &ipc, 4096).await;
    assert_eq!(ws.status(3).await.0, 0);
    assert_eq!(ws.do_get(5, "put=kept", None).await.batches(), original);
}
