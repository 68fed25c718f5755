//! The HTTP side of the game port, served by hyper: the WebSocket upgrade at
//! `/` (handed back to the connection, which then speaks the game protocol
//! on the same socket), the web page (`web`), the JSON API over the store,
//! `/healthz` and `/metrics`. Answers are JSON; what does not exist is a 404,
//! a malformed or out-of-range parameter a 400, each with `{"error": …}`;
//! no input is answered with a 500 or with a database's words.

use std::convert::Infallible;
use std::ops::RangeInclusive;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::upgrade::OnUpgrade;
use hyper::{Method, Request, Response, StatusCode};
use serde_json::json;
use tictactoe_protocol::api::ApiError;
use tokio::sync::OwnedSemaphorePermit;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;

use crate::core::text::MAX_NAME_CHARS;
use crate::session::shared::Shared;
use crate::store::record::{is_game_id, unix_ms};
use crate::store::{Query, StoreError};
use tictactoe_protocol::Rules;

/// Default and largest `limit` of the list routes.
pub const DEFAULT_LIMIT: usize = 20;
/// The largest `limit` a list route accepts; more is capped to it.
pub const MAX_LIMIT: usize = 100;

/// What one connection's HTTP side holds: the WebSocket upgrade left for
/// the connection to pick up (with the player's place), and the place of a
/// kept-alive HTTP client.
#[derive(Default)]
pub(crate) struct Slot {
    pub(crate) upgrade: Option<(OnUpgrade, OwnedSemaphorePermit)>,
    http: Option<OwnedSemaphorePermit>,
}

/// A connection's [`Slot`], shared with its requests.
pub(crate) type UpgradeSlot = Arc<Mutex<Slot>>;

type HttpResponse = Response<Full<Bytes>>;

/// Answers one HTTP request on the game port.
pub(crate) async fn serve(
    mut req: Request<Incoming>,
    shared: Arc<Shared>,
    slot: UpgradeSlot,
) -> Result<HttpResponse, Infallible> {
    if is_upgrade(&req) {
        return Ok(upgrade(&mut req, &slot, &shared));
    }
    // A kept-alive HTTP client holds a place of its own; with none free the
    // request is answered and the connection closes.
    let keep = {
        let mut slot = slot.lock().unwrap_or_else(|p| p.into_inner());
        if slot.http.is_none() {
            slot.http = shared.admission.http();
        }
        slot.http.is_some()
    };
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return Ok(error(StatusCode::METHOD_NOT_ALLOWED, "only GET is served here"));
    }
    let path = req.uri().path().to_owned();
    let params = params(req.uri().query().unwrap_or(""));
    let host = req.headers().get(header::HOST).and_then(|h| h.to_str().ok()).map(str::to_owned);
    let mut answer = route(&path, &params, host.as_deref(), &shared).await;
    if !keep {
        answer.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    Ok(answer)
}

fn is_upgrade(req: &Request<Incoming>) -> bool {
    req.headers()
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
}

/// Accepts a WebSocket handshake at `/` (RFC 6455 §4.2): 101 with the
/// accept key, and the upgrade left in `slot` for the connection.
fn upgrade(req: &mut Request<Incoming>, slot: &UpgradeSlot, shared: &Shared) -> HttpResponse {
    if req.uri().path() != "/" {
        return text(StatusCode::NOT_FOUND, "tictactoe speaks WebSocket at path /\n");
    }
    let key = req.headers().get(header::SEC_WEBSOCKET_KEY).map(|k| derive_accept_key(k.as_bytes()));
    let version_ok = req.headers().get(header::SEC_WEBSOCKET_VERSION).is_some_and(|v| v.as_bytes() == b"13");
    let connection_ok = req
        .headers()
        .get(header::CONNECTION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case("upgrade")));
    let (Some(accept), true, true, true) = (key, version_ok, connection_ok, req.method() == Method::GET)
    else {
        return text(
            StatusCode::BAD_REQUEST,
            "a WebSocket handshake needs GET, Connection: Upgrade, Sec-WebSocket-Key and Sec-WebSocket-Version: 13\n",
        );
    };
    let Some(player) = shared.admission.player() else {
        return text(StatusCode::SERVICE_UNAVAILABLE, "server is full, retry");
    };
    let mut slot = slot.lock().unwrap_or_else(|p| p.into_inner());
    // A player's connection is no HTTP client any more.
    slot.http = None;
    slot.upgrade = Some((hyper::upgrade::on(req), player));
    let mut resp = Response::new(Full::new(Bytes::new()));
    *resp.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let h = resp.headers_mut();
    h.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    h.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
    if let Ok(v) = HeaderValue::from_str(&accept) {
        h.insert(header::SEC_WEBSOCKET_ACCEPT, v);
    }
    resp
}

async fn route(path: &str, params: &[(String, String)], host: Option<&str>, shared: &Shared) -> HttpResponse {
    let segments: Vec<String> = path.trim_start_matches('/').split('/').map(decode).collect();
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    if let Some(page) = crate::net::web::answer(&segments, host) {
        return page;
    }
    let query = match segments.as_slice() {
        ["healthz"] => return healthz(shared),
        ["metrics"] => {
            let page =
                crate::metrics::render(&shared.stats, shared.store.stats(), shared.admission.refusals());
            let mut resp = text(StatusCode::OK, &page);
            resp.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
            );
            return resp;
        }
        // An id or a name that no record could have is not looked up.
        ["api", "games", id] if !is_game_id(id) => return error(StatusCode::NOT_FOUND, NO_GAME),
        ["api", "games", id] => Query::Game((*id).to_owned()),
        ["api", "players", name, ..] if name.chars().count() > MAX_NAME_CHARS => {
            return error(StatusCode::NOT_FOUND, NO_ACCOUNT);
        }
        ["api", "players", name] => Query::Player((*name).to_owned()),
        ["api", "players", name, "games"] => match player_games(name, params) {
            Ok(q) => q,
            Err(e) => return error(StatusCode::BAD_REQUEST, &e),
        },
        ["api", "tournaments"] => Query::Tournaments { now_ms: unix_ms(std::time::SystemTime::now()) },
        ["api", "tournaments", id] if !is_game_id(id) => return error(StatusCode::NOT_FOUND, NO_TOURNAMENT),
        ["api", "tournaments", id] => {
            Query::Tournament { id: (*id).to_owned(), now_ms: unix_ms(std::time::SystemTime::now()) }
        }
        ["api", "leaderboard"] => {
            let sizes = shared.config.min_size..=shared.config.max_size;
            match leaderboard(params, sizes) {
                Ok(q) => q,
                Err(e) => return error(StatusCode::BAD_REQUEST, &e),
            }
        }
        _ => {
            return error(
                StatusCode::NOT_FOUND,
                "no such page; the API is /api/games/{id}, /api/players/{name}, /api/players/{name}/games, \
                 /api/leaderboard, /api/tournaments, /api/tournaments/{id}",
            );
        }
    };
    let what = match &query {
        Query::Game(_) => NO_GAME,
        Query::Leaderboard { .. } => "no such pool",
        Query::Tournament { .. } => NO_TOURNAMENT,
        _ => NO_ACCOUNT,
    };
    match shared.store.query(query).await {
        Ok(Some(body)) => json_answer(StatusCode::OK, &body),
        Ok(None) => error(StatusCode::NOT_FOUND, what),
        Err(StoreError::Disabled) => {
            error(StatusCode::NOT_FOUND, "this server keeps no records (--database none)")
        }
        Err(StoreError::Busy) => {
            error(StatusCode::SERVICE_UNAVAILABLE, "the database is busy; try again in a moment")
        }
        Err(StoreError::Unavailable | StoreError::NameTaken) => error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the database cannot answer right now; try again in a moment",
        ),
    }
}

/// `/healthz`: 200 while everything the server needs works, 503 while the
/// store cannot write (or is not answering), with plain words for each part.
fn healthz(shared: &Shared) -> HttpResponse {
    let store = shared.store.health();
    let bus_up = shared.bus.as_ref().is_none_or(|b| b.up());
    let ok = matches!(store, crate::store::Health::Ok | crate::store::Health::Disabled) && bus_up;
    let body = json!({
        "status": if ok { "ok" } else { "degraded" },
        "instance": &*shared.instance,
        "store": store.text(),
        "bus": shared.bus.as_ref().map_or("none", |b| b.text()),
    });
    let mut resp = json_answer(if ok { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE }, &body);
    resp.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

/// The 404 of a game id no record has.
const NO_GAME: &str = "no game has that id";

/// The 404 of a tournament id nobody created.
const NO_TOURNAMENT: &str = "no tournament has that id";
/// The 404 of a name no account has.
const NO_ACCOUNT: &str = "no account has that name";

/// A query parameter that must be an integer: `None` when absent. Digits
/// beyond 64 bits are still an integer, one out of every range (saturated),
/// as on the WebSocket side; anything else is a 400's text.
fn integer(params: &[(String, String)], name: &str) -> Result<Option<i64>, String> {
    let Some(v) = param(params, name) else { return Ok(None) };
    if let Ok(n) = v.parse::<i64>() {
        return Ok(Some(n));
    }
    let digits = v.strip_prefix('-').unwrap_or(v);
    match !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        true => Ok(Some(if v.starts_with('-') { i64::MIN } else { i64::MAX })),
        false => Err(format!("{name} must be an integer")),
    }
}

/// `limit`: absent is [`DEFAULT_LIMIT`], more than [`MAX_LIMIT`] is capped,
/// anything but a positive integer is a 400.
fn limit(params: &[(String, String)]) -> Result<usize, String> {
    let positive = "limit must be a positive integer (at most 100 are given)";
    match integer(params, "limit").map_err(|_| positive.to_owned())? {
        None => Ok(DEFAULT_LIMIT),
        Some(n) if n > 0 => Ok(usize::try_from(n).unwrap_or(MAX_LIMIT).min(MAX_LIMIT)),
        Some(_) => Err(positive.into()),
    }
}

/// `/api/players/{name}/games`: `limit`, and `before`, a game id; a 400's
/// text. A well-formed id of no game is an empty page (see PROTOCOL.md).
fn player_games(name: &str, params: &[(String, String)]) -> Result<Query, String> {
    let limit = limit(params)?;
    let before = match param(params, "before") {
        Some(b) if !is_game_id(b) => {
            return Err("before must be a game id: 15 (or, from older servers, 8) letters and digits, as game_over.game_id gives".into());
        }
        b => b.map(str::to_owned),
    };
    Ok(Query::PlayerGames { name: name.to_owned(), limit, before })
}

/// `size` (default 3) within `sizes`, `win` (default `size`) within
/// `min(3, size)..=size` — checked as a `quick_match` is — and `limit`; a
/// 400's text.
fn leaderboard(params: &[(String, String)], sizes: RangeInclusive<usize>) -> Result<Query, String> {
    let (size, win) = (integer(params, "size")?, integer(params, "win")?);
    let rules = Rules::checked(size, win, sizes).map_err(|(_, text)| text)?;
    Ok(Query::Leaderboard { rules, limit: limit(params)? })
}

fn param<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

fn params(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(&v.replace('+', " ")))
        })
        .collect()
}

fn decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned()
}

fn json_answer(status: StatusCode, body: &impl serde::Serialize) -> HttpResponse {
    // Nothing these types hold can fail to serialize.
    let mut resp = Response::new(Full::new(Bytes::from(serde_json::to_vec(body).unwrap_or_default())));
    *resp.status_mut() = status;
    resp.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp
}

fn error(status: StatusCode, message: &str) -> HttpResponse {
    json_answer(status, &ApiError { error: message.to_owned() })
}

fn text(status: StatusCode, body: &str) -> HttpResponse {
    let mut resp = Response::new(Full::new(Bytes::from(body.to_owned())));
    *resp.status_mut() = status;
    resp.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    resp
}
