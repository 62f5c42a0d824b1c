//! The rule on a bearer token's bytes, which `--token`, the client's `auth` message and
//! the token a server returns from basic auth all follow.

/// A token must be visible ASCII, as bearer tokens are. HTTP/2 would pass bytes above
/// 0x7F, and servers fail on them in their own ways (pyarrow with a Python traceback).
/// The error names the first bad byte, never the token.
pub(crate) fn check_token(token: &str) -> Result<(), String> {
    match token.bytes().position(|b| !b.is_ascii_graphic()) {
        None => Ok(()),
        Some(at) => Err(format!(
            "token must be visible ASCII (0x21 to 0x7E), found byte {:#04X} at index {at}",
            token.as_bytes()[at]
        )),
    }
}
