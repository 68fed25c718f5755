//! Clients from other loopback addresses (127.0.0.2, 127.0.0.3, …), for the
//! limits a server keeps per address: the whole 127.0.0.0/8 range reaches a
//! server listening on 127.0.0.1.

use std::net::{IpAddr, SocketAddr};

use serde_json::Value;
use tokio::net::TcpSocket;
use tokio_tungstenite::MaybeTlsStream;

use crate::{Client, TestServer};

impl TestServer {
    /// Connects a new client whose socket is bound to `ip` (a loopback
    /// address) and reads its `welcome`. Plain `ws://` servers only.
    pub async fn client_from(&self, ip: IpAddr) -> Client {
        connect_from(self.addr, &self.url(), ip).await
    }
}

impl crate::process::ServerProcess {
    /// Connects a new client whose socket is bound to `ip` (a loopback
    /// address) and reads its `welcome`.
    pub async fn client_from(&self, ip: IpAddr) -> Client {
        connect_from(self.addr, &self.url(), ip).await
    }
}

/// A client of the server at `addr` (`url`) from `ip`, past its `welcome`.
async fn connect_from(addr: SocketAddr, url: &str, ip: IpAddr) -> Client {
    let socket = match ip {
        IpAddr::V4(_) => TcpSocket::new_v4(),
        IpAddr::V6(_) => TcpSocket::new_v6(),
    }
    .expect("a socket");
    socket.bind(SocketAddr::new(ip, 0)).expect("bind the client's address");
    let tcp = socket.connect(addr).await.expect("connect");
    let (ws, _) =
        tokio_tungstenite::client_async(url, MaybeTlsStream::Plain(tcp)).await.expect("WebSocket handshake");
    let mut client = Client { ws, welcome: Value::Null, received: Vec::new(), sent: Vec::new() };
    let welcome = client.recv_json().await;
    assert_eq!(welcome["type"], "welcome", "first message is welcome");
    client.welcome = welcome;
    client
}
