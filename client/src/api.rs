//! GETs from the server's HTTP API, on the same host and port as its
//! WebSocket (`ws://` → `http://`, `wss://` → `https://`), through hyper.

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpStream;

/// The host, port and whether TLS is spoken, from a server URL.
fn endpoint(url: &str) -> Result<(String, u16, bool), String> {
    let (tls, rest) = match (url.strip_prefix("ws://"), url.strip_prefix("wss://")) {
        (Some(rest), _) => (false, rest),
        (_, Some(rest)) => (true, rest),
        _ => return Err(format!("{url:?} is not a server URL; use ws://HOST:PORT or wss://HOST:PORT")),
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

/// GETs `path` from the server at `url`: the status and the JSON body.
pub async fn get(url: &str, path: &str) -> Result<(u16, Value), String> {
    let (host, port, tls) = endpoint(url)?;
    let stream = TcpStream::connect((host.as_str(), port))
        .await
        .map_err(|e| format!("cannot reach the server at {url}: {e} (is ttt-server running?)"))?;
    let body = if tls {
        let name =
            rustls_pki_types::ServerName::try_from(host.clone()).map_err(|e| format!("{host}: {e}"))?;
        let connector = tokio_rustls::TlsConnector::from(Arc::new(crate::net::tls_config()?));
        let stream = connector.connect(name, stream).await.map_err(|e| format!("TLS with {url}: {e}"))?;
        request(TokioIo::new(stream), &host, path).await?
    } else {
        request(TokioIo::new(stream), &host, path).await?
    };
    let (status, bytes) = body;
    let json = serde_json::from_slice(&bytes).map_err(|_| {
        format!(
            "{url} answered {path} with something that is not JSON (HTTP {status}); is it a tictactoe server?"
        )
    })?;
    Ok((status, json))
}

async fn request<I>(io: I, host: &str, path: &str) -> Result<(u16, Bytes), String>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake::<_, Empty<Bytes>>(io).await.map_err(|e| e.to_string())?;
    tokio::spawn(conn);
    let req = hyper::Request::get(path)
        .header(hyper::header::HOST, host)
        .body(Empty::new())
        .map_err(|e| e.to_string())?;
    let resp = sender.send_request(req).await.map_err(|e| format!("the API request failed: {e}"))?;
    let status = resp.status().as_u16();
    let body = resp.into_body().collect().await.map_err(|e| e.to_string())?.to_bytes();
    Ok((status, body))
}

/// The `error` of a non-200 answer, or the body.
pub fn ok(answer: (u16, Value)) -> Result<Value, String> {
    match answer {
        (200, body) => Ok(body),
        (status, body) => {
            Err(body["error"].as_str().map_or_else(|| format!("HTTP {status}"), crate::say::clean))
        }
    }
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
    fn endpoints() {
        assert_eq!(endpoint("ws://127.0.0.1:7878").unwrap(), ("127.0.0.1".into(), 7878, false));
        assert_eq!(endpoint("wss://example.org/").unwrap(), ("example.org".into(), 443, true));
        assert_eq!(endpoint("ws://[::1]:9/").unwrap(), ("::1".into(), 9, false));
        assert!(endpoint("http://x").is_err());
        assert_eq!(segment("Zoë b"), "Zo%C3%AB%20b");
    }
}
