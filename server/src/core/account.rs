//! Who a connection is: a guest with a display name, or signed in to an
//! account (possibly a bot's); and the secrets that prove it.

use std::sync::Arc;

use tictactoe_protocol::Rules;

use rand::TryRngCore;
use sha2::{Digest, Sha256};
use std::fmt::Write;
use subtle::ConstantTimeEq;

/// An account's row id in the store.
pub type AccountId = i64;

/// The player behind a connection, as seats and listings show them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Identity {
    /// Display name (an account's as registered).
    pub name: Arc<str>,
    /// The account signed in, or `None` for a guest.
    pub account: Option<AccountId>,
    /// Whether the account is a bot's.
    pub bot: bool,
    /// An account's ratings as shown, per pool it has played, as of when
    /// it signed in or its last rated game here: what rooms and challenges
    /// show of it (the store's writer computes them).
    pub ratings: Box<[(Rules, i64)]>,
}

impl Identity {
    /// The guest every connection is until its `hello`: one shared value,
    /// so that an idle connection allocates nothing for it.
    pub fn anonymous() -> Arc<Identity> {
        static ANONYMOUS: std::sync::OnceLock<Arc<Identity>> = std::sync::OnceLock::new();
        ANONYMOUS.get_or_init(|| Identity::guest("anonymous")).clone()
    }

    /// A guest called `name`.
    pub fn guest(name: &str) -> Arc<Identity> {
        Arc::new(Identity { name: name.into(), account: None, bot: false, ratings: Box::default() })
    }

    /// The rating shown for this player in the pool of `rules`: an
    /// account's, or a new account's (1500) for one it has not played;
    /// none for a guest.
    pub fn rating(&self, rules: Rules) -> Option<i64> {
        self.account?;
        let rules = rules.pool();
        let found = self.ratings.iter().find(|(r, _)| *r == rules);
        Some(found.map_or(NEW_RATING, |&(_, shown)| shown))
    }

    /// The same player with its rating in the pool of `rules` now `shown`.
    pub fn rated(&self, rules: Rules, shown: i64) -> Identity {
        let rules = rules.pool();
        let mut ratings: Vec<_> = self.ratings.iter().copied().filter(|(r, _)| *r != rules).collect();
        ratings.push((rules, shown));
        Identity { ratings: ratings.into(), ..self.clone() }
    }
}

/// The rating a new account starts at, as shown.
pub const NEW_RATING: i64 = 1500;

/// The SHA-256 of a secret: all the server keeps of a token. Tokens carry 128
/// random bits, so a fast hash is as good as a slow one.
pub type TokenHash = [u8; 32];

/// A fresh secret of 128 bits from the operating system's CSPRNG, as 32 hex
/// digits after `prefix`.
pub fn new_secret(prefix: &str) -> String {
    let mut bits = [0u8; 16];
    if let Err(e) = rand::rngs::OsRng.try_fill_bytes(&mut bits) {
        // The thread's generator is a CSPRNG seeded from the OS: second best.
        tracing::error!("the operating system's random generator failed: {e}");
        rand::RngCore::fill_bytes(&mut rand::rng(), &mut bits);
    }
    hex_secret(prefix, bits)
}

/// A secret drawn from `rng` (a CSPRNG in the server), with `prefix`.
pub fn secret_from(prefix: &str, rng: &mut impl rand::RngCore) -> String {
    let mut bits = [0u8; 16];
    rng.fill_bytes(&mut bits);
    hex_secret(prefix, bits)
}

fn hex_secret(prefix: &str, bits: [u8; 16]) -> String {
    let mut out = String::with_capacity(prefix.len() + 32);
    out.push_str(prefix);
    for b in bits {
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// The hash that stands for `secret`.
pub fn hash(secret: &str) -> TokenHash {
    Sha256::digest(secret.as_bytes()).into()
}

/// Whether `secret` hashes to `expected`, in time that does not depend on
/// where they differ.
pub fn matches(secret: &str, expected: &TokenHash) -> bool {
    bool::from(hash(secret).ct_eq(expected))
}

/// A name's key for uniqueness: names are unique ignoring case.
pub fn name_key(name: &str) -> String {
    name.to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_differ_and_match_only_their_hash() {
        let a = new_secret("T");
        let b = new_secret("T");
        assert_ne!(a, b);
        assert_eq!(a.len(), 33);
        assert!(matches(&a, &hash(&a)));
        assert!(!matches(&b, &hash(&a)));
    }

    #[test]
    fn name_keys_ignore_case() {
        assert_eq!(name_key("ÅnN"), name_key("åNn"));
    }
}
