//! The network side: accepting sockets (TCP, TLS, per-address caps), the
//! HTTP side of the game port (API, /metrics, /healthz, the page), the
//! bounded queues between tasks and the per-connection rate limit.

pub mod accept;
pub mod admission;
pub mod http;
pub mod metrics;
pub mod queue;
pub mod rate;
pub mod tls;
pub mod web;
pub mod ws;
