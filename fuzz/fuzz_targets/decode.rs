//! `ClientFrame::decode` (and `peek_id`) on arbitrary bytes: never a panic; a
//! frame that decodes re-encodes to JSON that decodes to the same frame.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tictactoe_protocol::{ClientFrame, peek_id};

fuzz_target!(|data: &[u8]| {
    // The server hands the decoder text frames only; tungstenite has checked the UTF-8.
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = peek_id(text);
    match ClientFrame::decode(text) {
        Ok(frame) => {
            let again = serde_json::to_string(&frame).expect("a decoded frame serializes");
            assert_eq!(ClientFrame::decode(&again).ok(), Some(frame), "round trip of {text:?}");
        }
        Err(e) => assert!(!e.message.is_empty(), "a refusal says why"),
    }
});
