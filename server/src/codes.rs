//! Room codes and resume tokens from the thread-local CSPRNG.

use rand::Rng;
use std::sync::Arc;

/// Room code alphabet: upper-case letters and digits without `I`, `O`, `0`, `1`.
const ALPHABET: &[u8; 32] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/// Characters in a room code: 10 × 5 bits = 50 bits.
pub const ROOM_CODE_LEN: usize = 10;

/// A fresh random room code.
pub fn room_code() -> Arc<str> {
    let mut rng = rand::rng();
    let code: String = (0..ROOM_CODE_LEN).map(|_| char::from(ALPHABET[rng.random_range(0..32)])).collect();
    code.into()
}

/// A room code as a user typed it: trimmed and upper-cased.
pub fn normalize_room_code(code: &str) -> String {
    code.trim().to_ascii_uppercase()
}

/// A fresh resume token: 128 random bits as 32 hex digits.
pub fn resume_token() -> Arc<str> {
    let bits: u128 = rand::rng().random();
    format!("{bits:032x}").into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_use_the_alphabet_and_differ() {
        let a = room_code();
        assert_eq!(a.len(), ROOM_CODE_LEN);
        assert!(a.bytes().all(|b| ALPHABET.contains(&b)));
        assert_ne!(a, room_code());
        assert_eq!(resume_token().len(), 32);
        assert_eq!(normalize_room_code(" abc2 "), "ABC2");
    }
}
