//! Basic auth and Handshake through the gateway, against real `pyarrow.flight` servers
//! (`flight_server.py --basic-auth`, `--echo-handshake`).

mod support;

use quiver::flight::control::{ClientMessage, Password, ServerMessage};
use quiver_gateway::Config;
use support::{gateway, Event, UndialledUpstream, Upstream, Ws};

fn basic_auth(stream: u32, username: &str, password: &str) -> ClientMessage {
    ClientMessage::BasicAuth {
        stream,
        username: username.into(),
        password: Password(password.into()),
    }
}

/// The `authorization` headers pyarrow saw on a call (its "headers" action).
async fn authorization_seen(ws: &mut Ws, stream: u32) -> serde_json::Value {
    ws.send(ClientMessage::DoAction {
        stream,
        action: "headers".into(),
        body: Vec::new(),
    })
    .await;
    let Event::Json(ServerMessage::Result { body, .. }) = ws.next().await else {
        panic!("expected the headers action's result");
    };
    assert_eq!(ws.status(stream).await, (0, String::new()));
    let headers: serde_json::Value = serde_json::from_slice(&body).expect("headers JSON");
    headers["authorization"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn basic_auth_gets_the_token_later_calls_carry() {
    let up = Upstream::start(&["--basic-auth", "ann:s3cret"]);
    let mut ws = Ws::to_gateway_for(&up).await;
    let refused = ws.do_get(1, "data:0:10:1", None).await;
    assert_eq!(
        refused.code, 16,
        "a call before basic auth: {}",
        refused.message
    );
    assert!(
        refused.message.starts_with("bad or missing bearer token"),
        "{}",
        refused.message
    );

    ws.send(basic_auth(2, "ann", "s3cret")).await;
    assert_eq!(ws.status(2).await, (0, String::new()));
    let ok = ws.do_get(3, "data:0:10:1", None).await;
    assert_eq!(ok.code, 0, "{}", ok.message);
    assert_eq!(ok.batches()[0].num_rows(), 10);
    assert_eq!(
        authorization_seen(&mut ws, 4).await,
        serde_json::json!(["Bearer token-for-ann"])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_auth_sent_while_basic_auth_runs_wins_over_its_token() {
    let up = Upstream::start(&["--basic-auth", "ann:s3cret", "--handshake-delay", "0.5"]);
    let mut ws = Ws::to_gateway_for(&up).await;
    // Sent together: the auth is read long before pyarrow answers the handshake.
    ws.send(basic_auth(1, "ann", "s3cret")).await;
    ws.send(ClientMessage::Auth {
        token: "mine".into(),
    })
    .await;
    assert_eq!(ws.status(1).await, (0, String::new()));
    // The server knows only the token it issued: a call with "mine" is refused.
    let after = ws.do_get(2, "data:0:10:1", None).await;
    assert_eq!(after.code, 16, "{}", after.message);
    assert!(
        after.message.starts_with("bad or missing bearer token"),
        "{}",
        after.message
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_password_is_unauthenticated_and_sets_no_token() {
    let up = Upstream::start(&["--basic-auth", "ann:s3cret"]);
    let mut ws = Ws::to_gateway_for(&up).await;
    ws.send(basic_auth(1, "ann", "guess")).await;
    let (code, message) = ws.status(1).await;
    assert_eq!(
        (code, message.as_str()),
        (16, "wrong username or password...")
    );
    let after = ws.do_get(2, "data:0:10:1", None).await;
    assert_eq!(after.code, 16, "{}", after.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handshake_without_a_bearer_token_fails_basic_auth() {
    let up = Upstream::start(&["--echo-handshake"]);
    let mut ws = Ws::to_gateway_for(&up).await;
    ws.send(basic_auth(1, "ann", "s3cret")).await;
    assert_eq!(
        ws.status(1).await,
        (
            16,
            "the server accepted the basic-auth handshake but sent no `authorization: \
             Bearer` header"
                .into()
        )
    );
    // Nor does the connection go on with the Basic credentials.
    assert_eq!(
        authorization_seen(&mut ws, 2).await,
        serde_json::Value::Null
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handshake_payloads_go_both_ways() {
    let up = Upstream::start(&["--echo-handshake"]);
    let mut ws = Ws::to_gateway_for(&up).await;
    ws.send(ClientMessage::Handshake {
        stream: 1,
        payload: b"hi".to_vec(),
    })
    .await;
    let Event::Json(ServerMessage::Handshake { stream, payload }) = ws.next().await else {
        panic!("expected a handshake answer");
    };
    assert_eq!((stream, payload.as_slice()), (1, &b"echo:hi"[..]));
    assert_eq!(ws.status(1).await, (0, String::new()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_credentials_never_reach_the_upstream() {
    let upstream = UndialledUpstream::bind();
    let mut ws = Ws::connect(gateway(Config::new(upstream.location.clone())).await, None)
        .await
        .expect("connect");
    ws.send(basic_auth(1, "ann:x", "s3cret")).await;
    assert_eq!(
        ws.status(1).await,
        (3, "a basic-auth username cannot contain ':'".into())
    );

    // A gateway holding the service credential takes no other, even after its token.
    let mut cfg = Config::new(upstream.location.clone());
    cfg.token = Some("service".into());
    let mut ws = Ws::connect(gateway(cfg).await, None)
        .await
        .expect("connect");
    ws.send(ClientMessage::Auth {
        token: "service".into(),
    })
    .await;
    ws.send(basic_auth(1, "ann", "s3cret")).await;
    assert_eq!(
        ws.status(1).await,
        (
            9,
            "this gateway holds the service credential (--token): connect with its token, \
             not a username and password"
                .into()
        )
    );

    upstream.assert_never_dialled();
}
