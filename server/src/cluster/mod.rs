//! What makes instances one cluster: the names that stay true across
//! instances ([`ids`]), the Redis bus ([`bus`]) and the leases' thread
//! that adopts a dead or stopped instance's games ([`adopt`]).

pub mod adopt;
pub mod bus;
pub mod matchmaker;
pub mod relay;
pub mod route;
pub mod tournaments;
