//! Basic auth (`basicAuth`): a Handshake upstream with `authorization: Basic
//! base64(username:password)`, whose response headers carry the bearer token that the
//! connection's later calls send. Arrow C++'s `AuthenticateBasicToken` (pyarrow's
//! `authenticate_basic_token`) and arrow-flight's `FlightSqlServiceClient::handshake` do
//! the same. As in arrow-flight, an answer without a token is an error: a connection
//! never goes on unauthenticated after asking for authentication.

use std::sync::{Arc, OnceLock};

use arrow_flight::HandshakeRequest;
use axum::http::{header, HeaderMap, HeaderValue};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use quiver::flight::control::Password;
use tonic::metadata::MetadataMap;
use tonic::Status;

use crate::token::check_token;
use crate::upstream::{request, CallMetadata, Client};

/// Exchanges `username` and `password` for the server's bearer token, which it puts in
/// `issued`. The call carries the `forwarded` headers too, but not the connection's
/// token. No error text names the password.
pub(crate) async fn basic(
    client: Client,
    mut forwarded: HeaderMap,
    username: String,
    password: Password,
    issued: Arc<OnceLock<String>>,
) -> Result<(), Status> {
    if username.contains(':') {
        // RFC 7617: the first colon ends the username.
        return Err(Status::invalid_argument(
            "a basic-auth username cannot contain ':'",
        ));
    }
    let credentials = STANDARD.encode(format!("{username}:{}", password.0));
    let value = HeaderValue::try_from(format!("Basic {credentials}"))
        .map_err(|e| Status::internal(format!("basic-auth header: {e}")))?;
    forwarded.insert(header::AUTHORIZATION, value);
    let metadata = CallMetadata {
        forwarded,
        token: None,
    };
    // One empty request, as arrow-flight sends: a server whose handshake reads one
    // works, and one that reads none ignores it.
    let req = request(tokio_stream::iter([HandshakeRequest::default()]), &metadata)?;
    let response = client.flight().handshake(req).await?;
    let mut token = bearer(response.metadata());
    let mut answers = response.into_inner();
    while answers.message().await?.is_some() {}
    // Arrow C++ servers may send the header with the trailers instead.
    if token.is_none() {
        token = answers.trailers().await?.as_ref().and_then(bearer);
    }
    let token = token.ok_or_else(|| {
        Status::unauthenticated(
            "the server accepted the basic-auth handshake but sent no \
             `authorization: Bearer` header",
        )
    })?;
    check_token(&token).map_err(|e| Status::unauthenticated(format!("the server's bearer {e}")))?;
    let _ = issued.set(token);
    Ok(())
}

/// The token of an `authorization: Bearer <token>` header; the scheme's case is ignored.
fn bearer(headers: &MetadataMap) -> Option<String> {
    let value = headers.get("authorization")?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.to_string())
}
