//! What a connection opens with, checked before its socket opens: the WebSocket
//! subprotocols it offers, and how it authenticates.

use crate::flight::SUBPROTOCOL;

/// A username and password that the gateway exchanges for a bearer token.
#[derive(Clone)]
pub struct BasicAuth {
    pub username: String,
    pub password: String,
}

/// How a connection authenticates, once the gateway's `hello` has arrived.
#[derive(Clone, Default)]
pub enum Credentials {
    #[default]
    None,
    /// A bearer token, checked by the gateway and sent upstream.
    Token(String),
    /// A username and password, exchanged for a bearer token.
    Basic(BasicAuth),
}

impl Credentials {
    /// A token, or a username and password: not both, and never one of the two alone.
    pub fn new(
        token: Option<String>,
        username: Option<String>,
        password: Option<String>,
    ) -> Result<Self, &'static str> {
        match (token, username, password) {
            (token, None, None) => Ok(token.map_or(Credentials::None, Credentials::Token)),
            (Some(_), Some(_), Some(_)) => {
                Err("give option token or username and password, not both")
            }
            (None, Some(username), Some(password)) => {
                Ok(Credentials::Basic(BasicAuth { username, password }))
            }
            _ => Err("options username and password go together"),
        }
    }
}

/// The subprotocols a connection offers: the protocol's own first, then `extra`.
pub fn protocols(mut extra: Vec<String>) -> Vec<String> {
    extra.insert(0, SUBPROTOCOL.into());
    extra
}

#[cfg(test)]
mod tests {
    use super::*;

    fn credentials(token: Option<&str>, username: Option<&str>, password: Option<&str>) -> String {
        let own = |s: Option<&str>| s.map(str::to_string);
        match Credentials::new(own(token), own(username), own(password)) {
            Ok(Credentials::None) => "none".into(),
            Ok(Credentials::Token(token)) => format!("token {token}"),
            Ok(Credentials::Basic(b)) => format!("basic {} {}", b.username, b.password),
            Err(e) => e.into(),
        }
    }

    #[test]
    fn a_connection_takes_a_token_or_a_username_and_password() {
        assert_eq!(credentials(None, None, None), "none");
        assert_eq!(credentials(Some("t"), None, None), "token t");
        assert_eq!(credentials(None, Some("ann"), Some("pw")), "basic ann pw");
        let both = "give option token or username and password, not both";
        assert_eq!(credentials(Some("t"), Some("ann"), Some("pw")), both);
        let alone = "options username and password go together";
        for (token, username, password) in [
            (None, Some("ann"), None),
            (None, None, Some("pw")),
            (Some("t"), Some("ann"), None),
            (Some("t"), None, Some("pw")),
        ] {
            assert_eq!(credentials(token, username, password), alone);
        }
    }

    #[test]
    fn the_protocols_offered_start_with_the_protocols_own() {
        assert_eq!(protocols(Vec::new()), [SUBPROTOCOL]);
        assert_eq!(
            protocols(vec!["bearer.x".into()]),
            [SUBPROTOCOL, "bearer.x"]
        );
    }
}
