//! The rule on a bearer token's bytes, which `--token`, the client's `auth` message and
//! the token a server returns from basic auth all follow.

/// Whether the client's token is the gateway's `--token`, in time that does not depend on
/// where they first differ: a client must not learn the token a byte at a time.
pub(crate) fn is_service_token(given: Option<&str>, expected: &str) -> bool {
    let Some(given) = given else {
        return false;
    };
    let same_length = given.len() == expected.len();
    let differences = given
        .bytes()
        .zip(expected.bytes())
        .fold(0u8, |acc, (a, b)| acc | (a ^ b));
    same_length & (differences == 0)
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_same_token_is_the_service_token() {
        assert!(is_service_token(Some("s3cret"), "s3cret"));
        for other in [
            None,
            Some(""),
            Some("s3cre"),
            Some("s3cret!"),
            Some("S3cret"),
        ] {
            assert!(!is_service_token(other, "s3cret"), "{other:?}");
        }
    }
}
