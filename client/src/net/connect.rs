//! Opening a connection: the WebSocket handshake and the server's
//! `welcome`, with an error a person can act on.

use std::time::Duration;

use futures::StreamExt;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::error::{TlsError, UrlError};
use tokio_tungstenite::tungstenite::http::StatusCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use tictactoe_protocol::{Limits, ServerMessage};

/// An open WebSocket to a server.
pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// How long a server has to say `welcome`.
const GREETING: Duration = Duration::from_secs(10);

/// Why no connection to a server was made.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The URL is not `ws://` or `wss://`.
    #[error("{url:?} is not a server URL; use ws://HOST:PORT or wss://HOST:PORT")]
    NotWebSocket {
        /// What was given.
        url: String,
    },
    /// The server's certificate is not trusted (likely a private CA).
    #[error("cannot connect to {url}: TLS: {error} (a server with a private CA needs --ca-cert)")]
    Untrusted {
        url: String,
        /// The TLS failure, as the socket reported it.
        error: std::io::Error,
    },
    /// TLS failed otherwise.
    #[error("cannot connect to {url}: TLS: {error}")]
    Tls { url: String, error: TlsError },
    /// Nothing answers at that address.
    #[error("cannot reach the server at {url}: {error} (is ttt-server running?)")]
    Unreachable { url: String, error: std::io::Error },
    /// Something answered HTTP but not as a WebSocket.
    #[error("{url} is not a tictactoe server (HTTP {status})")]
    NotAServer { url: String, status: StatusCode },
    /// The URL does not parse.
    #[error("{url:?} is not a valid server URL: {error}")]
    BadUrl {
        /// What was given.
        url: String,
        /// What is wrong with it.
        error: UrlError,
    },
    /// The handshake failed some other way.
    #[error("cannot connect to {url}: {error}")]
    Handshake { url: String, error: Box<WsError> },
    /// The server did not say `welcome` in time.
    #[error("{url} did not greet us within 10 s")]
    Silent { url: String },
    /// The server's first frame was not `welcome`.
    #[error("{url} is not a tictactoe server (no welcome)")]
    NoWelcome { url: String },
    /// The server hung up before its `welcome`.
    #[error("{url} closed the connection before greeting")]
    Hungup { url: String },
    /// `--server` named no URL at all.
    #[error("no server URL given; use --server ws://HOST:PORT (several: comma-separated)")]
    NoServer,
    /// None of several servers could be connected to: why, for each.
    #[error("no server answered: {}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    NoneAnswered(Vec<ConnectError>),
}

impl ConnectError {
    /// Why none of the servers tried was connected to: the one error of a
    /// single server as it is, several listed.
    pub fn all(mut failed: Vec<ConnectError>) -> ConnectError {
        match failed.len() {
            0 => ConnectError::NoServer,
            1 => failed.remove(0),
            _ => ConnectError::NoneAnswered(failed),
        }
    }
}

impl From<ConnectError> for String {
    fn from(e: ConnectError) -> String {
        e.to_string()
    }
}

/// Connects to `url` and reads its `welcome`.
pub async fn open(url: &str) -> Result<(Ws, Limits), ConnectError> {
    let url_owned = || url.to_owned();
    if !url.starts_with("ws://") && !url.starts_with("wss://") {
        return Err(ConnectError::NotWebSocket { url: url_owned() });
    }
    let connect = tokio_tungstenite::connect_async_tls_with_config(url, None, true, crate::tls::connector());
    let (mut ws, _) = connect.await.map_err(|e| match e {
        WsError::Io(error) if error.get_ref().is_some_and(|inner| inner.is::<rustls::Error>()) => {
            ConnectError::Untrusted { url: url_owned(), error }
        }
        WsError::Tls(error) => ConnectError::Tls { url: url_owned(), error },
        WsError::Io(error) => ConnectError::Unreachable { url: url_owned(), error },
        WsError::Http(resp) => ConnectError::NotAServer { url: url_owned(), status: resp.status() },
        WsError::Url(error) => ConnectError::BadUrl { url: url_owned(), error },
        other => ConnectError::Handshake { url: url_owned(), error: Box::new(other) },
    })?;
    let first = tokio::time::timeout(GREETING, ws.next())
        .await
        .map_err(|_| ConnectError::Silent { url: url_owned() })?;
    match first {
        Some(Ok(Message::Text(text))) => match ServerMessage::decode(&text) {
            Ok(Some(ServerMessage::Welcome { limits, .. })) => Ok((ws, limits)),
            _ => Err(ConnectError::NoWelcome { url: url_owned() }),
        },
        _ => Err(ConnectError::Hungup { url: url_owned() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn what_cannot_connect_says_what_it_always_said() {
        let said = |e: Result<(Ws, Limits), ConnectError>| e.err().map(|e| e.to_string()).unwrap_or_default();
        assert_eq!(
            said(open("http://example.invalid").await),
            "\"http://example.invalid\" is not a server URL; use ws://HOST:PORT or wss://HOST:PORT"
        );
        let url = || "ws://h:1".to_owned();
        assert_eq!(ConnectError::Silent { url: url() }.to_string(), "ws://h:1 did not greet us within 10 s");
        assert_eq!(
            ConnectError::NoWelcome { url: url() }.to_string(),
            "ws://h:1 is not a tictactoe server (no welcome)"
        );
        assert_eq!(
            ConnectError::Hungup { url: url() }.to_string(),
            "ws://h:1 closed the connection before greeting"
        );
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let reason = refused.to_string();
        assert_eq!(
            ConnectError::Unreachable { url: url(), error: refused }.to_string(),
            format!("cannot reach the server at ws://h:1: {reason} (is ttt-server running?)")
        );
        assert_eq!(
            ConnectError::NotAServer { url: url(), status: StatusCode::NOT_FOUND }.to_string(),
            "ws://h:1 is not a tictactoe server (HTTP 404 Not Found)"
        );
    }
}
