//! Connection limits over real sockets: frame size (1009), the connection cap,
//! the path, the handshake timeout, and silent clients.

use std::time::Duration;

use futures::StreamExt;
use serde_json::json;
use tictactoe_server::Config;
use tictactoe_tests::{Client, TestServer, quick_pair, test_config};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

#[tokio::test]
async fn an_oversized_frame_closes_with_1009_and_others_play_on() {
    let server = TestServer::start(test_config()).await;
    let mut pair = quick_pair(&server, 3).await;
    let mut big = server.client().await;
    let padding = "x".repeat(5000);
    big.send(json!({"type": "ping", "pad": padding})).await;
    assert_eq!(big.expect_close().await, Some(CloseCode::Size));
    // A frame just under the limit is fine.
    let mut ok = server.client().await;
    ok.send(json!({"type": "ping", "id": 1, "pad": "x".repeat(3900)})).await;
    assert_eq!(ok.recv_type("pong").await["id"], 1);
    // The game in progress is untouched.
    assert_eq!(pair.x.play(0, 0).await["seq"], 1);
    assert_eq!(pair.o.recv_type("moved").await["seq"], 1);
    server.shutdown().await;
}

#[tokio::test]
async fn over_the_connection_cap_new_clients_get_503() {
    let config = Config { max_connections: 2, ..test_config() };
    let server = TestServer::start(config).await;
    let _a = server.client().await;
    let mut b = server.client().await;
    let refused = tokio_tungstenite::connect_async(server.url()).await;
    let Err(tokio_tungstenite::tungstenite::Error::Http(resp)) = refused else {
        panic!("expected an HTTP refusal, got {:?}", refused.map(|_| ()));
    };
    assert_eq!(resp.status(), 503);
    // Existing clients are served; a freed slot is usable again.
    b.send(json!({"type": "ping", "id": 1})).await;
    assert_eq!(b.recv_type("pong").await["id"], 1);
    drop(b);
    assert!(connects_again(&server.url()).await, "a slot frees up when a client leaves");
    server.shutdown().await;
}

#[tokio::test]
async fn wrong_path_is_404_and_unfinished_handshakes_are_dropped() {
    let config = Config { handshake_timeout_ms: 200, ..test_config() };
    let server = TestServer::start(config).await;
    let wrong = tokio_tungstenite::connect_async(format!("ws://{}/other", server.addr)).await;
    assert!(matches!(wrong, Err(tokio_tungstenite::tungstenite::Error::Http(r)) if r.status() == 404));
    // A TCP connection that never sends the handshake is closed by the server.
    let mut raw = TcpStream::connect(server.addr).await.expect("connect");
    raw.write_all(b"GET / HTTP/1.1\r\n").await.expect("write");
    let mut buf = [0u8; 64];
    let n = tokio::time::timeout(Duration::from_secs(5), raw.read(&mut buf)).await;
    assert!(matches!(n, Ok(Ok(0)) | Ok(Err(_))), "the server hangs up: {n:?}");
    let mut c = server.client().await;
    c.send(json!({"type": "ping", "id": 1})).await;
    assert_eq!(c.recv_type("pong").await["id"], 1);
    server.shutdown().await;
}

/// On tokio's paused clock: the 4+ intervals are the server's time, not the
/// machine's, however loaded it is.
#[tokio::test(start_paused = true)]
async fn a_client_that_stops_answering_pings_is_dropped() {
    let config = Config { ping_interval_ms: 250, ..test_config() };
    let server = TestServer::start(config).await;
    // A WebSocket that completes the handshake and then never reads:
    // tungstenite answers pings only when it is polled, so it goes silent.
    let (silent, _) = tokio_tungstenite::connect_async(server.url()).await.expect("connect");
    let mut live = server.client().await;
    // The live client keeps reading (and so answers pings) for 4+ intervals.
    for i in 0..24 {
        live.send(json!({"type": "ping", "id": i})).await;
        assert_eq!(live.recv_type("pong").await["id"], i);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(server.stats.connections(), 1, "only the silent client is dropped");
    drop(silent);
    server.shutdown().await;
}

/// On tokio's paused clock: the server's timers and the test's readings are
/// the same virtual time, which moves only when everything waits, so the
/// pings' times are the server's schedule, not the machine's load.
#[tokio::test(start_paused = true)]
async fn a_client_that_only_answers_pings_stays_and_is_pinged_every_interval() {
    let interval = Duration::from_millis(200);
    let config = Config { ping_interval_ms: 200, ..test_config() };
    let server = TestServer::start(config).await;
    let (mut ws, _) = tokio_tungstenite::connect_async(server.url()).await.expect("connect");
    let start = tokio::time::Instant::now();
    // Reading is all this client does; tungstenite answers each ping with a pong.
    let mut pings = Vec::new();
    let four_pings = async {
        while let Some(Ok(msg)) = ws.next().await {
            if matches!(msg, Message::Ping(_)) {
                pings.push(start.elapsed());
                if pings.len() == 4 {
                    return;
                }
            }
        }
        panic!("the connection ended after {} pings", pings.len());
    };
    tokio::time::timeout(Duration::from_secs(10), four_pings).await.expect("four pings");
    println!("pings at {pings:?}");
    // The first comes in the second half of the first interval, then one per interval.
    assert!(interval / 2 <= pings[0] && pings[0] <= interval, "first ping at {:?}", pings[0]);
    for gap in pings.windows(2).map(|p| p[1] - p[0]) {
        assert!(
            interval <= gap && gap <= interval + Duration::from_millis(5),
            "pings {gap:?} apart: {pings:?}"
        );
    }
    assert_eq!(server.stats.connections(), 1, "pongs alone keep a client connected");
    drop(ws);
    server.shutdown().await;
}

#[tokio::test]
async fn binary_frames_are_refused_and_the_connection_stays() {
    let server = TestServer::start(test_config()).await;
    let mut c: Client = server.client().await;
    c.send_raw(Message::binary(b"{\"type\":\"ping\"}".to_vec())).await;
    let err = c.recv_type("error").await;
    assert_eq!(err["code"], "bad_message");
    c.send(json!({"type": "ping", "id": 2})).await;
    assert_eq!(c.recv_type("pong").await["id"], 2);
    server.shutdown().await;
}

#[tokio::test]
async fn a_spectator_that_cannot_keep_up_is_dropped_not_waited_on() {
    let config = Config { outbound_queue: 8, ..test_config() };
    let server = TestServer::start(config).await;
    let mut pair = tictactoe_tests::private_pair(&server, 100).await;
    // Row-major moves on a 100x100 board complete no line within 40 rows.
    let mut seq = 0usize;
    let mut play = async |pair: &mut tictactoe_tests::Pair, n: usize| {
        for _ in 0..n {
            let (m, o) = if seq % 2 == 0 { (&mut pair.x, &mut pair.o) } else { (&mut pair.o, &mut pair.x) };
            m.play(seq / 100, seq % 100).await;
            o.recv_type("moved").await;
            seq += 1;
        }
    };
    play(&mut pair, 2000).await;
    // A spectator that asks for ~30 KB snapshots again and again, never reading.
    let (mut slow, _) = tokio_tungstenite::connect_async(server.url()).await.expect("connect");
    use futures::SinkExt;
    for _ in 0..400 {
        let msg = json!({"type": "spectate", "room": pair.room}).to_string();
        if slow.send(Message::text(msg)).await.is_err() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    // The players go on; the room never waits for the spectator, which is
    // dropped once its queue is full.
    let mut dropped = false;
    for _ in 0..100 {
        play(&mut pair, 10).await;
        if server.stats.connections() == 2 {
            dropped = true;
            break;
        }
    }
    assert!(dropped, "the slow spectator was dropped while the game went on");
    drop(slow);
    server.shutdown().await;
}

#[tokio::test]
async fn settings_no_game_could_run_with_stop_the_server_with_the_flag_named() {
    let cases = [
        (Config { min_size: 5, max_size: 3, ..test_config() }, "--min-size 5 is larger than --max-size 3"),
        (Config { min_size: 0, ..test_config() }, "board sizes run from 1"),
        (Config { max_size: 5000, ..test_config() }, "--max-size 5000"),
        (Config { ping_interval_ms: 0, ..test_config() }, "--ping-interval-ms must be at least 1"),
        (Config { max_message_bytes: 100, ..test_config() }, "--max-message-bytes 100"),
    ];
    for (config, want) in cases {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let served = tictactoe_server::Server::new(config).serve(listener, std::future::pending());
        let err = served.await.expect_err("refused at start");
        assert!(err.to_string().contains(want), "{err} should say {want}");
    }
}

/// Kept-alive HTTP clients have a cap of their own: a dashboard holding
/// connections to the API never locks players out, and an HTTP client past
/// the cap is still answered (then its connection closes).
#[tokio::test]
async fn http_clients_have_their_own_cap_and_never_lock_players_out() {
    let config = Config { max_connections: 2, max_http_connections: 2, ..test_config() };
    let server = TestServer::start(config).await;
    // Two kept-alive API clients take the HTTP places.
    let mut kept = Vec::new();
    for _ in 0..2 {
        let mut tcp = TcpStream::connect(server.addr).await.expect("connect");
        tcp.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").await.expect("write");
        let text = read_response(&mut tcp).await;
        assert!(text.starts_with("HTTP/1.1 200") && !text.contains("connection: close"), "{text}");
        kept.push(tcp);
    }
    // A third is answered, and told the connection closes.
    let mut third = TcpStream::connect(server.addr).await.expect("connect");
    third.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").await.expect("write");
    let text = read_response(&mut third).await;
    assert!(text.starts_with("HTTP/1.1 200") && text.contains("connection: close"), "{text}");
    // Players still get in, up to their own cap.
    let mut a = server.client().await;
    let _b = server.client().await;
    a.send(json!({"type": "ping", "id": 1})).await;
    assert_eq!(a.recv_type("pong").await["id"], 1);
    let refused = tokio_tungstenite::connect_async(server.url()).await;
    assert!(matches!(refused, Err(tokio_tungstenite::tungstenite::Error::Http(r)) if r.status() == 503));
    let (_, metrics) = tictactoe_tests::http_get(server.addr, "/metrics").await;
    assert!(metrics.contains(r#"ttt_connections_refused_total{reason="players"} 1"#), "{metrics}");
    assert!(metrics.contains(r#"ttt_connections_refused_total{reason="http"}"#), "{metrics}");
    server.shutdown().await;
}

/// One address may hold `--max-connections-per-ip` connections (loopback
/// too); past it new ones get 503, other work goes on, and a freed place
/// is usable again.
#[tokio::test]
async fn one_address_is_capped_by_max_connections_per_ip() {
    let config = Config { max_connections_per_ip: 3, ..test_config() };
    let server = TestServer::start(config).await;
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(server.client().await);
    }
    let refused = tokio_tungstenite::connect_async(server.url()).await;
    let Err(tokio_tungstenite::tungstenite::Error::Http(resp)) = refused else {
        panic!("expected an HTTP refusal, got {:?}", refused.map(|_| ()));
    };
    assert_eq!(resp.status(), 503);
    let body = resp.body().as_deref().map(String::from_utf8_lossy).unwrap_or_default().into_owned();
    assert!(body.contains("too many connections from your address"), "{body}");
    held[0].send(json!({"type": "ping", "id": 1})).await;
    assert_eq!(held[0].recv_type("pong").await["id"], 1);
    drop(held.pop());
    assert!(connects_again(&server.url()).await, "a place frees up when a connection closes");
    server.shutdown().await;
}

/// Whether a WebSocket to `url` gets in within 2.5 s (a closed connection's
/// place is given back as its task ends).
async fn connects_again(url: &str) -> bool {
    for _ in 0..50 {
        if tokio_tungstenite::connect_async(url).await.is_ok() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// Reads one HTTP response (headers lower-cased) and its body.
async fn read_response(tcp: &mut TcpStream) -> String {
    let mut buf = vec![0u8; 8192];
    let mut text = String::new();
    loop {
        let n = tokio::time::timeout(Duration::from_secs(5), tcp.read(&mut buf))
            .await
            .expect("an answer in time")
            .expect("read");
        text.push_str(&String::from_utf8_lossy(&buf[..n]));
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let len = head
                .lines()
                .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length: ").map(str::to_owned))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if body.len() >= len || n == 0 {
                return text.to_ascii_lowercase().replacen("http/1.1", "HTTP/1.1", 1);
            }
        }
        if n == 0 {
            return text;
        }
    }
}

/// The bytes the kernel holds unsent (or unacknowledged) for the TCP
/// connection from local port `local` to remote port `remote`, as
/// `/proc/net/tcp` lists it (`tx_queue`).
fn unsent(local: u16, remote: u16) -> Option<u64> {
    let table = std::fs::read_to_string("/proc/net/tcp").ok()?;
    table.lines().skip(1).find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        let port = |addr: &str| addr.rsplit(':').next().and_then(|p| u16::from_str_radix(p, 16).ok());
        let queues = f.get(4)?;
        (port(f.get(1)?)? == local && port(f.get(2)?)? == remote)
            .then(|| u64::from_str_radix(queues.split(':').next()?, 16).ok())?
    })
}

#[tokio::test]
async fn a_client_that_never_reads_holds_a_bounded_send_buffer_and_is_dropped() {
    // Pings every second: a write that waits two of them gives up.
    let server = TestServer::start(Config { ping_interval_ms: 1000, ..test_config() }).await;
    let mut pair = tictactoe_tests::private_pair(&server, 100).await;
    for seq in 0..2000usize {
        let (m, o) = if seq % 2 == 0 { (&mut pair.x, &mut pair.o) } else { (&mut pair.o, &mut pair.x) };
        m.play(seq / 100, seq % 100).await;
        o.recv_type("moved").await;
    }
    // A watcher whose own receive buffer is small, asking for ~30 KB
    // snapshots again and again and never reading one.
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(16 * 1024).expect("rcvbuf");
    let tcp = socket.connect(server.addr).await.expect("connect");
    let mine = tcp.local_addr().expect("addr").port();
    let (mut slow, _) = tokio_tungstenite::client_async(server.url(), tcp).await.expect("handshake");
    use futures::SinkExt;
    let mut most = 0;
    for i in 0..600 {
        let msg = json!({"type": "spectate", "room": pair.room}).to_string();
        if slow.send(Message::text(msg)).await.is_err() {
            break;
        }
        if i % 20 == 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
            most = most.max(unsent(server.addr.port(), mine).unwrap_or(0));
        }
    }
    assert!(most > 0, "the kernel's send queue to the watcher was measured");
    assert!(most <= 1 << 20, "the server's socket held {most} bytes for a client that does not read");
    // Still not reading for a few ping intervals: dropped. What the kernel
    // had buffered is read, then the stream ends.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let ended =
        tokio::time::timeout(Duration::from_secs(20), async { while let Some(Ok(_)) = slow.next().await {} })
            .await;
    assert!(ended.is_ok(), "the watcher that never read was dropped");
    server.shutdown().await;
}
