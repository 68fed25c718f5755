//! The web page, embedded in the binary at compile time: `/` and `/r/{room}`
//! serve the page, and its modules and style sheet are served by name. Plain
//! JavaScript modules and CSS from `web/`, no build step. Every answer
//! forbids inline script (Content-Security-Policy) and sniffing.

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};

/// One embedded file: its path, content type and body.
struct Asset {
    path: &'static str,
    kind: &'static str,
    body: &'static str,
}

const PAGE: &str = include_str!("../../../web/index.html");

const JS: &str = "text/javascript; charset=utf-8";

const ASSETS: [Asset; 21] = [
    Asset { path: "app.js", kind: JS, body: include_str!("../../../web/app.js") },
    Asset { path: "board.js", kind: JS, body: include_str!("../../../web/board.js") },
    Asset { path: "controls.js", kind: JS, body: include_str!("../../../web/controls.js") },
    Asset { path: "fischer.js", kind: JS, body: include_str!("../../../web/fischer.js") },
    Asset { path: "game.js", kind: JS, body: include_str!("../../../web/game.js") },
    Asset { path: "invite.js", kind: JS, body: include_str!("../../../web/invite.js") },
    Asset { path: "messages.js", kind: JS, body: include_str!("../../../web/messages.js") },
    Asset { path: "page.js", kind: JS, body: include_str!("../../../web/page.js") },
    Asset { path: "picker.js", kind: JS, body: include_str!("../../../web/picker.js") },
    Asset { path: "records.js", kind: JS, body: include_str!("../../../web/records.js") },
    Asset { path: "render.js", kind: JS, body: include_str!("../../../web/render.js") },
    Asset { path: "result.js", kind: JS, body: include_str!("../../../web/result.js") },
    Asset { path: "saved.js", kind: JS, body: include_str!("../../../web/saved.js") },
    Asset { path: "socket.js", kind: JS, body: include_str!("../../../web/socket.js") },
    Asset { path: "state.js", kind: JS, body: include_str!("../../../web/state.js") },
    Asset { path: "tournament.js", kind: JS, body: include_str!("../../../web/tournament.js") },
    Asset {
        path: "tournament-controls.js",
        kind: JS,
        body: include_str!("../../../web/tournament-controls.js"),
    },
    Asset { path: "tournament-view.js", kind: JS, body: include_str!("../../../web/tournament-view.js") },
    Asset { path: "words.js", kind: JS, body: include_str!("../../../web/words.js") },
    Asset {
        path: "style.css",
        kind: "text/css; charset=utf-8",
        body: include_str!("../../../web/style.css"),
    },
    Asset { path: "favicon.svg", kind: "image/svg+xml", body: include_str!("../../../web/favicon.svg") },
];

/// The page's answer for `segments` of a GET path, if the page has one:
/// the page itself for `/` and `/r/{room}`, else an asset by name. `host`
/// (the request's `Host`) names the WebSocket the page may connect to.
pub fn answer(segments: &[&str], host: Option<&str>) -> Option<Response<Full<Bytes>>> {
    let (kind, body) = match segments {
        [""] | ["r", _] | ["r", _, ""] => ("text/html; charset=utf-8", PAGE),
        [name] => ASSETS.iter().find(|a| a.path == *name).map(|a| (a.kind, a.body))?,
        _ => return None,
    };
    let mut resp = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *resp.status_mut() = StatusCode::OK;
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    // Assets change with the binary: check each time (they are small).
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Ok(csp) = HeaderValue::from_str(&policy(host)) {
        h.insert(header::CONTENT_SECURITY_POLICY, csp);
    }
    Some(resp)
}

/// The Content-Security-Policy: scripts and styles from this server only,
/// no inline script or style, the WebSocket of this host, nothing framed.
fn policy(host: Option<&str>) -> String {
    // Only a plain host[:port] is echoed; anything else leaves just 'self'.
    let plain =
        |h: &&str| !h.is_empty() && h.bytes().all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b));
    let sockets = host.filter(plain).map(|h| format!(" ws://{h} wss://{h}")).unwrap_or_default();
    format!(
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'{sockets}; \
         base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_and_its_assets_are_served_with_a_strict_policy() {
        let page = answer(&[""], Some("127.0.0.1:7878")).expect("the page");
        let csp = page.headers()[header::CONTENT_SECURITY_POLICY].to_str().unwrap().to_owned();
        assert!(csp.contains("script-src 'self';") && !csp.contains("unsafe"), "{csp}");
        assert!(csp.contains("connect-src 'self' ws://127.0.0.1:7878 wss://127.0.0.1:7878;"), "{csp}");
        assert!(answer(&["r", "K7QM3XPA2B"], None).is_some());
        let js = answer(&["app.js"], None).expect("app.js");
        assert_eq!(js.headers()[header::CONTENT_TYPE], "text/javascript; charset=utf-8");
        assert!(answer(&["nope.js"], None).is_none());
        assert!(answer(&["r", "A", "B"], None).is_none());
        // A host with anything but host characters is not echoed.
        let odd = answer(&[""], Some("evil.com; script-src *")).expect("the page");
        let csp = odd.headers()[header::CONTENT_SECURITY_POLICY].to_str().unwrap().to_owned();
        assert!(!csp.contains("evil"), "{csp}");
    }

    #[test]
    fn every_module_a_served_module_imports_is_served() {
        for asset in ASSETS.iter().filter(|a| a.kind == JS) {
            for line in asset.body.lines().filter(|l| l.contains(" from './")) {
                let name =
                    line.split("from './").nth(1).and_then(|r| r.split('\'').next()).unwrap_or_default();
                assert!(
                    answer(&[name], None).is_some(),
                    "{} imports {name}, which is not served",
                    asset.path
                );
            }
        }
    }

    #[test]
    fn the_page_has_no_inline_script_or_style() {
        assert!(!PAGE.contains("<script>") && !PAGE.contains("style="), "inline code would be blocked");
        assert!(PAGE.contains(r#"<script type="module" src="/app.js">"#));
    }
}
