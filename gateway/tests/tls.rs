//! TLS on both sides of the gateway, with a CA and certificates made at test time: the
//! gateway dials pyarrow Flight servers over `grpc+tls` (server checked, optionally
//! mTLS), and serves `wss://` itself.

mod support;

use std::sync::Arc;

use quiver::flight::control::{ClientMessage, Descriptor, ServerMessage};
use quiver_gateway::tls::{server_config, UpstreamTls};
use quiver_gateway::Config;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::CertificateDer;
use support::certs::{Ca, Files, Leaf};
use support::{config, gateway, Event, Upstream, Ws};
use tokio_rustls::rustls::{crypto::ring, ClientConfig, RootCertStore};

/// A pyarrow server on `grpc+tls` with `leaf`, requiring a client certificate signed by
/// `client_ca` when given; the files must outlive the server's start.
fn tls_upstream(files: &Files, leaf: &Leaf, client_ca: Option<&Ca>, args: &[&str]) -> Upstream {
    let cert = files.write("server.pem", &leaf.cert_pem);
    let key = files.write("server.key", &leaf.key_pem);
    let mut all = vec!["--tls-cert", &cert, "--tls-key", &key];
    let ca;
    if let Some(client_ca) = client_ca {
        ca = files.write("client-ca.pem", &client_ca.pem);
        all.extend(["--client-ca", &ca]);
    }
    all.extend(args);
    Upstream::start(&all)
}

/// The test configuration for `upstream`, dialled at `grpc+tls://HOST:port` and trusting
/// `ca`.
fn tls_config(upstream: &Upstream, host: &str, ca: &Ca) -> Config {
    let mut c = config(upstream);
    c.upstream = format!("grpc+tls://{host}:{}", upstream.port);
    c.upstream_tls = UpstreamTls {
        ca_pem: Some(ca.pem.clone().into_bytes()),
        identity_pem: None,
    };
    c
}

/// The code and message of a DoGet through a gateway with `cfg`.
async fn doget_status(cfg: Config) -> (i32, String) {
    let mut ws = Ws::connect(gateway(cfg).await, None)
        .await
        .expect("connect");
    let d = ws.do_get(1, "data:0:10:1", None).await;
    (d.code, d.message)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doget_over_grpc_tls_from_the_upstream_and_a_tls_location() {
    let (ca, files_a, files_b) = (Ca::new(), Files::new(), Files::new());
    let leaf = ca.leaf(&["127.0.0.1", "localhost"]);
    let b = tls_upstream(&files_b, &leaf, None, &[]);
    let b_location = format!("grpc+tls://127.0.0.1:{}", b.port);
    let a = tls_upstream(&files_a, &leaf, None, &["--peer", &b_location]);
    let mut cfg = tls_config(&a, "127.0.0.1", &ca);
    cfg.allow_locations = vec![b_location.clone()];
    let mut ws = Ws::connect(gateway(cfg).await, None)
        .await
        .expect("connect");

    let ticket = "data:0:1000:3";
    let d = ws.do_get(1, ticket, None).await;
    assert_eq!((d.code, d.message.as_str()), (0, ""));
    assert_eq!(d.batches(), ws.reference(2, ticket).await);

    // The FlightInfo names B at its grpc+tls location; the gateway dials it over TLS.
    ws.send(ClientMessage::GetFlightInfo {
        stream: 3,
        descriptor: Descriptor::Path(vec!["parts".into()]),
    })
    .await;
    let info = match ws.next().await {
        Event::Json(ServerMessage::FlightInfo { info, .. }) => info,
        _ => panic!("expected flightInfo"),
    };
    assert_eq!(ws.status(3).await.0, 0);
    let endpoint = &info.endpoints[1];
    assert_eq!(endpoint.locations, [b_location]);
    let ticket = String::from_utf8(endpoint.ticket.clone()).expect("utf8");
    let d = ws
        .do_get(4, &ticket, endpoint.locations.first().cloned())
        .await;
    assert_eq!((d.code, d.message.as_str()), (0, ""));
    assert_eq!(d.batches(), ws.reference(5, &ticket).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_that_fails_its_check_names_the_host_and_the_reason() {
    let ca = Ca::new();
    let cases = [
        (
            "an unknown CA",
            Ca::new().leaf(&["127.0.0.1"]),
            "127.0.0.1",
            "invalid peer certificate: UnknownIssuer",
        ),
        (
            "another host's certificate",
            ca.leaf(&["other.example"]),
            "127.0.0.1",
            "invalid peer certificate: certificate not valid for name \"127.0.0.1\"; \
             certificate is only valid for DnsName(\"other.example\")",
        ),
        (
            "an expired certificate",
            ca.expired(),
            "localhost",
            // Then the time of the check, which changes from run to run.
            "invalid peer certificate: certificate expired: verification time ",
        ),
    ];
    for (what, leaf, host, reason) in cases {
        let files = Files::new();
        let up = tls_upstream(&files, &leaf, None, &[]);
        let (code, message) = doget_status(tls_config(&up, host, &ca)).await;
        let expected = format!("TLS with grpc+tls://{host}:{} failed: {reason}", up.port);
        assert_eq!(code, 14, "{what}: {message}");
        match message.strip_prefix(&expected) {
            Some("") => {}
            Some(time) if what == "an expired certificate" => {
                // 1609459200 is 2021-01-01, when `Ca::expired` certificates end.
                let valid_until = "(UNIX), but certificate is not valid after 1609459200 (";
                assert!(time.contains(valid_until), "{what}: {message}");
            }
            _ => panic!("{what}: expected {expected:?}, found {message:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutual_tls_needs_the_client_certificate() {
    let (ca, files) = (Ca::new(), Files::new());
    let up = tls_upstream(&files, &ca.leaf(&["127.0.0.1"]), Some(&ca), &[]);
    let client = ca.leaf(&["quiver-gateway"]);

    let mut cfg = tls_config(&up, "127.0.0.1", &ca);
    cfg.upstream_tls.identity_pem = Some((
        client.cert_pem.clone().into_bytes(),
        client.key_pem.clone().into_bytes(),
    ));
    assert_eq!(doget_status(cfg).await, (0, String::new()));

    // TLS 1.3 sends the server's refusal after the client's handshake is done: the
    // gateway sees a connection closed before the answer.
    let expected = format!(
        "grpc+tls://127.0.0.1:{} closed the connection before answering (a server that \
         requires a client certificate does so: see --upstream-cert)",
        up.port
    );
    let without = doget_status(tls_config(&up, "127.0.0.1", &ca)).await;
    assert_eq!(without, (14, expected));
}

/// A rustls client that trusts only `ca`.
fn client_trusting(ca: &Ca) -> Arc<ClientConfig> {
    let mut roots = RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(ca.pem.as_bytes()).expect("CA PEM"))
        .expect("CA certificate");
    let config = ClientConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    Arc::new(config)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_serves_wss() {
    let up = Upstream::start(&[]);
    let ca = Ca::new();
    let leaf = ca.leaf(&["localhost"]);
    let mut cfg = config(&up);
    cfg.tls = Some(server_config(leaf.cert_pem.as_bytes(), leaf.key_pem.as_bytes()).unwrap());
    let addr = gateway(cfg).await;
    let url = format!("wss://localhost:{}/flight", addr.port());

    let mut ws = Ws::connect_with(&url, &[], Some(client_trusting(&ca)))
        .await
        .expect("wss connect");
    let ticket = "data:0:1000:2";
    let d = ws.do_get(1, ticket, None).await;
    assert_eq!((d.code, d.message.as_str()), (0, ""));
    assert_eq!(d.batches(), ws.reference(2, ticket).await);

    // A client that does not trust the certificate is refused, and plain ws:// fails.
    let untrusted = Ws::connect_with(&url, &[], Some(client_trusting(&Ca::new()))).await;
    let error = untrusted
        .err()
        .expect("untrusted certificate refused")
        .to_string();
    assert!(error.contains("UnknownIssuer"), "{error}");
    let plain = format!("ws://localhost:{}/flight", addr.port());
    assert!(Ws::connect_with(&plain, &[], None).await.is_err());
}
