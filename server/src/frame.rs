//! Server messages serialized once into frames that all their recipients share.

use tokio_tungstenite::tungstenite::Utf8Bytes;

/// Frames are serialized into chunks of this many bytes: one reference-counted
/// allocation shared by the frames in it, instead of two allocations (the text
/// and its reference count) per frame. A frame still queued for a slow client
/// keeps its chunk alive, so a chunk is small: with `--outbound-queue` 256, a
/// client's queue pins at most 256 KiB before the client is dropped.
const FRAME_CHUNK: usize = 1024;

thread_local! {
    static CHUNK: std::cell::RefCell<bytes::BytesMut> = std::cell::RefCell::new(bytes::BytesMut::new());
}

/// Serializes a message once into a shareable frame.
pub fn encode(message: &tictactoe_protocol::ServerMessage) -> Utf8Bytes {
    use bytes::BufMut;
    CHUNK.with_borrow_mut(|chunk| {
        if chunk.capacity() < FRAME_CHUNK / 4 {
            *chunk = bytes::BytesMut::with_capacity(FRAME_CHUNK);
        }
        // Serializing these types cannot fail: every map key is a string.
        if serde_json::to_writer((&mut *chunk).writer(), message).is_err() {
            chunk.clear();
        }
        Utf8Bytes::try_from(chunk.split().freeze()).unwrap_or_default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use tictactoe_protocol::{ErrorCode, Player, ServerMessage};

    fn moved(seq: usize) -> ServerMessage {
        ServerMessage::Moved {
            room: Arc::from("ROOM"),
            row: 1,
            col: 2,
            player: Player::X,
            seq,
            next: Some(Player::O),
            clock_ms: None,
            id: None,
        }
    }

    #[test]
    fn frames_from_one_chunk_and_across_chunks_keep_their_own_text() {
        // Enough frames to fill several chunks, one of them larger than a chunk.
        let big = ServerMessage::error(ErrorCode::BadMessage, "x".repeat(3 * FRAME_CHUNK), None);
        let mut messages: Vec<ServerMessage> = (1..=40).map(moved).collect();
        messages.insert(17, big);
        let frames: Vec<Utf8Bytes> = messages.iter().map(encode).collect();
        for (frame, message) in frames.iter().zip(&messages) {
            assert_eq!(frame.as_str(), message.to_json());
        }
    }
}
