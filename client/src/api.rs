//! GETs from the server's HTTP API, on the same host and port as its
//! WebSocket (`ws://` → `http://`, `wss://` → `https://`), through hyper.

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::TokioIo;
use serde::de::DeserializeOwned;
use tictactoe_protocol::api;
use tokio::net::TcpStream;

/// The host, port and whether TLS is spoken, from a server URL.
fn endpoint(url: &str) -> Result<(String, u16, bool), ApiError> {
    let (tls, rest) = match (url.strip_prefix("ws://"), url.strip_prefix("wss://")) {
        (Some(rest), _) => (false, rest),
        (_, Some(rest)) => (true, rest),
        _ => return Err(ApiError::NotAUrl(url.to_owned())),
    };
    let authority = rest.split('/').next().unwrap_or_default();
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || authority.starts_with('[') => match p.parse() {
            Ok(port) => (h, port),
            Err(_) => (authority, if tls { 443 } else { 80 }),
        },
        _ => (authority, if tls { 443 } else { 80 }),
    };
    Ok((host.trim_start_matches('[').trim_end_matches(']').to_owned(), port, tls))
}

/// Why an API answer could not be had, in words for the user.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The URL is not `ws://…` or `wss://…`.
    #[error("{0:?} is not a server URL; use ws://HOST:PORT or wss://HOST:PORT")]
    NotAUrl(String),
    /// No TCP connection to the server.
    #[error("cannot reach the server at {url}: {source} (is ttt-server running?)")]
    Unreachable {
        url: String,
        /// What the connect said.
        source: std::io::Error,
    },
    /// The host cannot be a TLS server name.
    #[error("{host}: {reason}")]
    BadHost { host: String, reason: String },
    /// No TLS configuration could be built.
    #[error(transparent)]
    TlsConfig(#[from] crate::tls::TlsError),
    /// The TLS handshake failed.
    #[error("TLS with {url}: {source}")]
    Tls {
        url: String,
        /// What the handshake said.
        source: std::io::Error,
    },
    /// HTTP failed before the request was sent, or while its answer came.
    #[error("{0}")]
    Http(#[from] hyper::Error),
    /// The request could not be built (a path no URL can hold).
    #[error("{0}")]
    BadRequest(#[from] hyper::http::Error),
    /// Sending the request failed.
    #[error("the API request failed: {0}")]
    Request(hyper::Error),
    /// The answer is not JSON at all.
    #[error(
        "{url} answered {path} with something that is not JSON (HTTP {status}); is it a tictactoe server?"
    )]
    NotJson { url: String, path: String, status: u16 },
    /// The answer is JSON, but not the contract's shape.
    #[error("{url} answered {path} with JSON this client cannot read ({source}); is it a tictactoe server?")]
    NotTheContract {
        url: String,
        path: String,
        /// What did not fit.
        source: serde_json::Error,
    },
    /// The server said no: its `error` (cleaned for a terminal), or the
    /// HTTP status when it gave none.
    #[error("{0}")]
    Refused(String),
}

/// GETs `path` from the first of `servers` (the `--server` list,
/// comma-separated) that can be reached, and reads a 200's body as `T`; any
/// other status is [`ApiError::Refused`] with the server's words.
pub async fn get<T: DeserializeOwned>(servers: &str, path: &str) -> Result<T, ApiError> {
    let mut last = None;
    for url in crate::servers::urls(servers) {
        match get_one(&url, path).await {
            Err(e @ (ApiError::Unreachable { .. } | ApiError::Tls { .. })) => last = Some(e),
            answered => return answered,
        }
    }
    Err(last.unwrap_or_else(|| ApiError::NotAUrl(servers.to_owned())))
}

/// GETs `path` from the server at `url`, as [`get`] does.
async fn get_one<T: DeserializeOwned>(url: &str, path: &str) -> Result<T, ApiError> {
    let (host, port, tls) = endpoint(url)?;
    let stream = TcpStream::connect((host.as_str(), port))
        .await
        .map_err(|source| ApiError::Unreachable { url: url.to_owned(), source })?;
    let (status, bytes) = if tls {
        let name = rustls_pki_types::ServerName::try_from(host.clone())
            .map_err(|e| ApiError::BadHost { host: host.clone(), reason: e.to_string() })?;
        let connector = tokio_rustls::TlsConnector::from(Arc::new(crate::tls::tls_config()?));
        let stream = connector
            .connect(name, stream)
            .await
            .map_err(|source| ApiError::Tls { url: url.to_owned(), source })?;
        request(TokioIo::new(stream), &host, path).await?
    } else {
        request(TokioIo::new(stream), &host, path).await?
    };
    let not_json = || ApiError::NotJson { url: url.to_owned(), path: path.to_owned(), status };
    if status != 200 {
        return match serde_json::from_slice::<api::ApiError>(&bytes) {
            Ok(body) => Err(ApiError::Refused(crate::say::clean(&body.error))),
            Err(e) if e.is_data() => Err(ApiError::Refused(format!("HTTP {status}"))),
            Err(_) => Err(not_json()),
        };
    }
    serde_json::from_slice(&bytes).map_err(|source| match source.is_data() {
        true => ApiError::NotTheContract { url: url.to_owned(), path: path.to_owned(), source },
        false => not_json(),
    })
}

async fn request<I>(io: I, host: &str, path: &str) -> Result<(u16, Bytes), ApiError>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, conn) = hyper::client::conn::http1::handshake::<_, Empty<Bytes>>(io).await?;
    tokio::spawn(conn);
    let req = hyper::Request::get(path).header(hyper::header::HOST, host).body(Empty::new())?;
    let resp = sender.send_request(req).await.map_err(ApiError::Request)?;
    let status = resp.status().as_u16();
    let body = resp.into_body().collect().await?.to_bytes();
    Ok((status, body))
}

/// How long the record of a game may take to come.
const RECORD_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The record of game `id` (`GET /api/games/{id}`) from the first of
/// `servers` that can be reached, within a few seconds, or why not in words.
pub async fn game_record(servers: &str, id: &str) -> Result<api::GameRecord, String> {
    let path = format!("/api/games/{}", crate::servers::segment(id));
    match tokio::time::timeout(RECORD_WAIT, get(servers, &path)).await {
        Ok(answer) => answer.map_err(|e| e.to_string()),
        Err(_) => Err("the server did not answer in time".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints() {
        assert_eq!(endpoint("ws://127.0.0.1:7878").unwrap(), ("127.0.0.1".into(), 7878, false));
        assert_eq!(endpoint("wss://example.org/").unwrap(), ("example.org".into(), 443, true));
        assert_eq!(endpoint("ws://[::1]:9/").unwrap(), ("::1".into(), 9, false));
        let refused = endpoint("http://x").unwrap_err().to_string();
        assert_eq!(refused, "\"http://x\" is not a server URL; use ws://HOST:PORT or wss://HOST:PORT");
    }
}
