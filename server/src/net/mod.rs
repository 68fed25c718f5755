//! The network side: accepting sockets (TCP, TLS, per-address caps), the
//! HTTP side of the game port (API, /metrics, /healthz, the page), the
//! bounded queues between tasks and the per-connection rate limit.

pub(crate) mod accept;
pub(crate) mod http;
pub(crate) mod tls;
pub(crate) mod web;
pub(crate) mod ws;
