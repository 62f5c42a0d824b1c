//! TLS on both sides of the gateway, with a CA and certificates made at test time: the
//! gateway dials pyarrow Flight servers over `grpc+tls` (server checked, optionally
//! mTLS), and serves `wss://` itself.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use quiver::flight::control::{ClientMessage, Descriptor, ServerMessage};
use quiver_gateway::tls::{server_config, UpstreamTls};
use quiver_gateway::Config;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::CertificateDer;
use support::certs::{Ca, Files, Leaf};
use support::{config, gateway, Event, GatewayProcess, Upstream, Ws, WAIT};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::rustls::{crypto::ring, ClientConfig, RootCertStore};
use tokio_tungstenite::tungstenite;

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
async fn a_grpc_tls_location_is_never_dialled_in_plaintext() {
    let plain = Upstream::start(&[]);
    let (code, message) = doget_status(tls_config(&plain, "127.0.0.1", &Ca::new())).await;
    let expected = format!(
        "TLS with grpc+tls://127.0.0.1:{} failed: received corrupt message of type \
         InvalidContentType",
        plain.port
    );
    assert_eq!((code, message), (14, expected));
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
    // gateway sees the connection close before the answer, or lost as it writes or
    // reads, whichever comes first.
    let location = format!("grpc+tls://127.0.0.1:{}", up.port);
    let hint = "(a server that requires a client certificate closes it so: see \
                --upstream-cert)";
    let before_answer = format!("{location} closed the connection before answering {hint}");
    let lost = format!("upstream connection to {location} lost: ");
    let (code, message) = doget_status(tls_config(&up, "127.0.0.1", &ca)).await;
    assert_eq!(code, 14, "{message}");
    let named = message == before_answer || message.starts_with(&lost);
    assert!(named && message.ends_with(hint), "{message}");
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

/// A raw HTTP/1.1 GET of `path` over TLS to `localhost:port`: the whole response.
async fn https_get(port: u16, path: &str, tls: Arc<ClientConfig>) -> String {
    let tcp = tokio::net::TcpStream::connect(("localhost", port))
        .await
        .expect("connect");
    let name = rustls_pki_types::ServerName::try_from("localhost").expect("name");
    let mut stream = tokio_rustls::TlsConnector::from(tls)
        .connect(name, tcp)
        .await
        .expect("TLS handshake");
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut response = String::new();
    tokio::time::timeout(WAIT, stream.read_to_string(&mut response))
        .await
        .expect("in time")
        .expect("read");
    response
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_serves_wss() {
    let up = Upstream::start(&[]);
    let ca = Ca::new();
    let leaf = ca.leaf(&["localhost"]);
    let mut cfg = config(&up);
    cfg.tls = Some(server_config(leaf.cert_pem.as_bytes(), leaf.key_pem.as_bytes()).unwrap());
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    cfg.static_dir = Some(repo.clone());
    let addr = gateway(cfg).await;
    let url = format!("wss://localhost:{}/flight", addr.port());

    // Static files share the listener, so they are served over https.
    let page = https_get(addr.port(), "/www/index.html", client_trusting(&ca)).await;
    let index = std::fs::read_to_string(repo.join("www/index.html")).expect("www/index.html");
    assert!(page.starts_with("HTTP/1.1 200 OK\r\n"), "{page}");
    assert!(page.ends_with(&index), "the body is www/index.html");

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_wss_refusals_are_readable_and_handshakes_have_a_deadline() {
    let up = Upstream::start(&[]);
    let ca = Ca::new();
    let leaf = ca.leaf(&["localhost"]);
    let mut cfg = config(&up);
    cfg.tls = Some(server_config(leaf.cert_pem.as_bytes(), leaf.key_pem.as_bytes()).unwrap());
    cfg.max_connections_per_client = 1;
    cfg.header_timeout = Duration::from_secs(2);
    let addr = gateway(cfg).await;
    let url = format!("wss://localhost:{}/flight", addr.port());
    let trusting = client_trusting(&ca);

    let first = Ws::connect_with(&url, &[], Some(trusting.clone()))
        .await
        .expect("first");
    let refused = match Ws::connect_with(&url, &[], Some(trusting)).await {
        Err(tungstenite::Error::Http(response)) => response,
        Err(e) => panic!("expected a 503 response, got {e}"),
        Ok(_) => panic!("a connection over the limit was accepted"),
    };
    assert_eq!(refused.status(), 503);
    let body = String::from_utf8_lossy(refused.body().as_deref().unwrap_or_default());
    assert_eq!(body, "this client is at its limit of 1 connections\n");

    // A socket that never starts its handshake is closed after --header-timeout-secs
    // (from another client address, so that it is not refused as over the limit).
    drop(first);
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket
        .bind("127.0.0.2:0".parse().unwrap())
        .expect("bind 127.0.0.2");
    let mut silent = socket.connect(addr).await.expect("connect from 127.0.0.2");
    let started = Instant::now();
    let mut rest = Vec::new();
    tokio::time::timeout(WAIT, silent.read_to_end(&mut rest))
        .await
        .expect("the gateway closes the socket")
        .ok();
    let waited = started.elapsed();
    assert!(
        rest.is_empty() && waited >= Duration::from_millis(1900) && waited < Duration::from_secs(6),
        "closed after {waited:?} with {} bytes; the timeout is 2 s",
        rest.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_reads_its_certificates_from_pem_files() {
    let (ca, files) = (Ca::new(), Files::new());
    let server = ca.leaf(&["127.0.0.1"]);
    let up = tls_upstream(&files, &server, Some(&ca), &[]);
    let gateway_leaf = ca.leaf(&["localhost"]);
    let ca_file = files.write("ca.pem", &ca.pem);
    let cert = files.write("gateway.pem", &gateway_leaf.cert_pem);
    let key = files.write("gateway.key", &gateway_leaf.key_pem);
    let upstream = format!("grpc+tls://127.0.0.1:{}", up.port);
    let gateway = GatewayProcess::start(&[
        "--upstream",
        &upstream,
        "--upstream-ca",
        &ca_file,
        "--upstream-cert",
        &cert,
        "--upstream-key",
        &key,
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
    ]);
    let url = format!("wss://localhost:{}/flight", gateway.addr.port());
    let mut ws = Ws::connect_with(&url, &[], Some(client_trusting(&ca)))
        .await
        .expect("wss connect");
    let d = ws.do_get(1, "data:0:100:2", None).await;
    assert_eq!((d.code, d.message.as_str()), (0, ""));
    assert_eq!(d.batches(), ws.reference(2, "data:0:100:2").await);
}

/// The code and message of a DoGet through the gateway binary dialling `upstream`,
/// whose system roots are the PEM file `roots` (rustls-native-certs reads
/// `SSL_CERT_FILE`, and `SSL_CERT_DIR` unless empty).
async fn doget_with_system_roots(upstream: &str, roots: &str) -> (i32, String) {
    let env = [("SSL_CERT_FILE", roots), ("SSL_CERT_DIR", "")];
    let gateway = GatewayProcess::start_with_env(&["--upstream", upstream], &env);
    let mut ws = Ws::connect(gateway.addr, None).await.expect("connect");
    let d = ws.do_get(1, "data:0:10:1", None).await;
    (d.code, d.message)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_upstream_ca_the_system_roots_are_trusted() {
    let (ca, files) = (Ca::new(), Files::new());
    let up = tls_upstream(&files, &ca.leaf(&["127.0.0.1"]), None, &[]);
    let upstream = format!("grpc+tls://127.0.0.1:{}", up.port);
    let trusted = files.write("roots.pem", &ca.pem);
    assert_eq!(
        doget_with_system_roots(&upstream, &trusted).await,
        (0, String::new())
    );
    let other = files.write("other-roots.pem", &Ca::new().pem);
    let expected = format!("TLS with {upstream} failed: invalid peer certificate: UnknownIssuer");
    assert_eq!(
        doget_with_system_roots(&upstream, &other).await,
        (14, expected)
    );
}

#[test]
fn a_tls_upstream_without_any_root_stops_the_gateway() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_quiver-gateway"))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            "grpc+tls://127.0.0.1:1",
        ])
        .env("SSL_CERT_FILE", "/nonexistent/roots.pem")
        .env("SSL_CERT_DIR", "")
        .output()
        .expect("run quiver-gateway");
    assert!(!output.status.success());
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "quiver-gateway: grpc+tls upstreams need CA certificates: the system has none \
         (failed to read PEM from file: No such file or directory (os error 2) at \
         '/nonexistent/roots.pem'); pass --upstream-ca\n"
    );
}
