//! TLS from PEM files: the certificate the gateway serves `wss://` with (`--tls-cert`,
//! `--tls-key`), and how it checks `grpc+tls` upstreams (the system's roots or
//! `--upstream-ca`) and proves itself to them (`--upstream-cert`, `--upstream-key`).
//! Files are read and checked once, at start, so that a bad one stops the gateway
//! instead of failing every call.

use std::io;
use std::path::Path;
use std::sync::Arc;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, TrustAnchor};
use tokio_rustls::rustls::{crypto::ring, ServerConfig};
use tonic::transport::{Certificate, ClientTlsConfig, Identity};

/// How the gateway checks `grpc+tls` upstreams and proves itself to them.
#[derive(Clone, Debug, Default)]
pub struct UpstreamTls {
    /// PEM CA certificates trusted instead of the system's roots.
    pub ca_pem: Option<Vec<u8>>,
    /// A PEM certificate chain and its key, sent to upstreams that ask for one (mTLS).
    pub identity_pem: Option<(Vec<u8>, Vec<u8>)>,
}

impl UpstreamTls {
    /// Reads and checks the PEM files of `--upstream-ca`, and of `--upstream-cert` with
    /// `--upstream-key`.
    pub fn from_files(ca: Option<&Path>, identity: Option<(&Path, &Path)>) -> io::Result<Self> {
        let ca_pem = ca
            .map(|path| read_certificates("--upstream-ca", path))
            .transpose()?;
        let identity_pem = identity
            .map(|(cert, key)| {
                io::Result::Ok((
                    read_certificates("--upstream-cert", cert)?,
                    read_key("--upstream-key", key)?,
                ))
            })
            .transpose()?;
        Ok(UpstreamTls {
            ca_pem,
            identity_pem,
        })
    }

    /// tonic's client configuration; the system's roots are read here, when no CA is
    /// given. The hostname is checked against the location's host, as tonic does.
    pub(crate) fn client_config(&self) -> io::Result<ClientTlsConfig> {
        let mut config = match &self.ca_pem {
            Some(pem) => ClientTlsConfig::new().ca_certificate(Certificate::from_pem(pem)),
            None => ClientTlsConfig::new().trust_anchors(system_roots()?),
        };
        if let Some((cert, key)) = &self.identity_pem {
            config = config.identity(Identity::from_pem(cert, key));
        }
        Ok(config)
    }
}

/// The server configuration for `wss://` from a PEM certificate chain and key.
pub fn server_config(cert_pem: &[u8], key_pem: &[u8]) -> Result<Arc<ServerConfig>, String> {
    let chain = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("certificate PEM: {e}"))?;
    if chain.is_empty() {
        return Err("expected a PEM certificate, found none".into());
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| format!("key PEM: {e}"))?;
    let mut config = ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| format!("certificate and key: {e}"))?;
    // Browsers upgrade to a WebSocket over HTTP/1.1 only.
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// Reads `--tls-cert` and `--tls-key` into a server configuration.
pub fn server_config_from_files(cert: &Path, key: &Path) -> io::Result<Arc<ServerConfig>> {
    let cert_pem = read_certificates("--tls-cert", cert)?;
    let key_pem = read_key("--tls-key", key)?;
    server_config(&cert_pem, &key_pem)
        .map_err(|e| invalid(format!("--tls-cert and --tls-key: {e}")))
}

/// The file's PEM text, holding at least one certificate; an error names the option and
/// the file.
fn read_certificates(option: &str, path: &Path) -> io::Result<Vec<u8>> {
    let pem = read(option, path)?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| invalid(format!("{option} {}: {e}", path.display())))?;
    if certs.is_empty() {
        return Err(invalid(format!(
            "{option} {}: expected a PEM certificate, found none",
            path.display()
        )));
    }
    Ok(pem)
}

/// The file's PEM text, holding a private key.
fn read_key(option: &str, path: &Path) -> io::Result<Vec<u8>> {
    let pem = read(option, path)?;
    PrivateKeyDer::from_pem_slice(&pem).map_err(|e| {
        invalid(format!(
            "{option} {}: expected a PEM private key: {e}",
            path.display()
        ))
    })?;
    Ok(pem)
}

fn read(option: &str, path: &Path) -> io::Result<Vec<u8>> {
    std::fs::read(path)
        .map_err(|e| io::Error::new(e.kind(), format!("{option} {}: {e}", path.display())))
}

/// The system's CA certificates (as `SSL_CERT_FILE`/`SSL_CERT_DIR` or the platform
/// store name them), read once per gateway rather than at every channel tonic opens.
fn system_roots() -> io::Result<Vec<TrustAnchor<'static>>> {
    let found = rustls_native_certs::load_native_certs();
    let roots: Vec<_> = found
        .certs
        .iter()
        .filter_map(|der| webpki::anchor_from_trusted_cert(der).ok())
        .map(|anchor| anchor.to_owned())
        .collect();
    if roots.is_empty() {
        let errors: Vec<String> = found.errors.iter().map(|e| e.to_string()).collect();
        return Err(invalid(format!(
            "grpc+tls upstreams need CA certificates: the system has none ({}); \
             pass --upstream-ca",
            errors.join("; ")
        )));
    }
    Ok(roots)
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}
