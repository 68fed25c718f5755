//! Room codes, drawn from the random source the lobby is handed.

use rand::Rng;
use std::sync::Arc;

/// Room code alphabet: upper-case letters and digits without `I`, `O`, `0`, `1`.
const ALPHABET: &[u8; 32] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/// Characters in a room code: 10 × 5 bits = 50 bits.
pub const ROOM_CODE_LEN: usize = 10;

/// A fresh random room code from `rng` (a CSPRNG in the server: codes of
/// private rooms must not be guessable).
pub fn room_code(rng: &mut impl Rng) -> Arc<str> {
    let code: String = (0..ROOM_CODE_LEN).map(|_| char::from(ALPHABET[rng.random_range(0..32)])).collect();
    code.into()
}

/// The refusal's words for a code no room has.
pub fn no_room(code: &str) -> String {
    format!("no room has the code {code:?}; check the code")
}

/// A room code as typed, made comparable: trimmed, upper case.
pub fn normalize_room_code(code: &str) -> String {
    code.trim().to_ascii_uppercase()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn codes_use_the_alphabet_and_differ() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let a = room_code(&mut rng);
        assert_eq!(a.len(), ROOM_CODE_LEN);
        assert!(a.bytes().all(|b| ALPHABET.contains(&b)));
        assert_ne!(a, room_code(&mut rng));
        assert_eq!(normalize_room_code(" abc2 "), "ABC2");
    }
}
