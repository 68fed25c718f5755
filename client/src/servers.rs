//! The servers a `--server` list names, and the addresses made from it for
//! a person: the command and the web page that take a friend to a room.

use crate::say::{clean, invoked_as};

/// The server URL from `--server`, `TTT_SERVER`, or the default.
pub const DEFAULT_SERVER: &str = "ws://127.0.0.1:7878";

/// Where the server is.
#[derive(clap::Args)]
pub struct ServerArg {
    /// Server URL; several, comma-separated (ws://a:7878,ws://b:7878: the
    /// instances of one cluster), are tried in turn when connecting and
    /// again when reconnecting after the connection is lost.
    #[arg(long, env = "TTT_SERVER", default_value = DEFAULT_SERVER, value_name = "URL[,URL…]")]
    pub server: String,
    /// PEM file of the CA that signed a `wss://` server's certificate (a
    /// private CA); without it, `wss://` trusts the public web PKI.
    #[arg(long, env = "TTT_CA_CERT", value_name = "PEM")]
    ca_cert: Option<std::path::PathBuf>,
}

impl ServerArg {
    /// The server URLs (comma-separated), once the CA of `--ca-cert` (if
    /// any) is trusted.
    pub fn url(&self) -> Result<&str, crate::tls::CaError> {
        if let Some(path) = &self.ca_cert {
            crate::tls::trust_ca(path)?;
        }
        Ok(&self.server)
    }
}

/// The URLs of a `--server` value: comma-separated, each tried in turn
/// (the instances of one cluster, or a server and its standby).
pub fn urls(servers: &str) -> Vec<String> {
    servers.split(',').map(str::trim).filter(|u| !u.is_empty()).map(str::to_owned).collect()
}

/// The command a friend runs to take the free seat of `room` on `servers`
/// (the `--server` list): this program as it was started, so that it works
/// where `ttt` is not on `PATH`.
pub fn join_command(servers: &str, room: &str) -> String {
    format!("{} play --join {} --server {servers}", invoked_as(), clean(room))
}

/// The web page of `room` on the first of `servers` (a `--server` list,
/// the server connected to first): `ws://h:p/` → `http://h:p/r/ROOM`,
/// `wss` → `https`, for a friend without `ttt`.
pub fn room_page(servers: &str, room: &str) -> String {
    let url = urls(servers).into_iter().next().unwrap_or_default();
    let (scheme, rest) = match url.split_once("://") {
        Some(("wss", rest)) => ("https", rest),
        Some((_, rest)) => ("http", rest),
        None => ("http", url.as_str()),
    };
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    format!("{scheme}://{host}/r/{}", segment(&clean(room)))
}

/// An invite to `room` on `servers` (a `--server` list, the server
/// connected to first): the command for `ttt`, and the room's web page on
/// that first server for a friend without `ttt`.
pub fn invite(servers: &str, room: &str) -> String {
    format!("{}  or open {}", join_command(servers, room), room_page(servers, room))
}

/// `s` percent-encoded for a path segment.
pub fn segment(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => char::from(b).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_room_is_named_on_the_first_server_for_the_command_and_the_browser() {
        assert_eq!(urls(" ws://a:1, ,wss://b "), ["ws://a:1", "wss://b"]);
        assert_eq!(room_page("wss://b:9/x,ws://a:1", "AB C"), "https://b:9/r/AB%20C");
        assert_eq!(room_page("ws://a:1", "ABC"), "http://a:1/r/ABC");
        assert!(
            join_command("ws://a:1,ws://b:2", "ABC").ends_with(" play --join ABC --server ws://a:1,ws://b:2")
        );
        assert_eq!(segment("Zoë b"), "Zo%C3%AB%20b");
    }
}
