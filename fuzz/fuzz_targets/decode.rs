//! `ClientFrame::decode` (and `peek_id`) on arbitrary bytes: never a panic; a
//! frame that decodes has a string `type` and re-encodes to JSON that decodes
//! to the same frame.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tictactoe_protocol::{ClientFrame, peek_id};

/// A frame's `type` as raw JSON (a `Value` could not hold every number the
/// decoder skips in unknown fields, such as `1e999`).
#[derive(serde::Deserialize)]
struct Tag<'a> {
    #[serde(borrow, rename = "type")]
    ty: &'a serde_json::value::RawValue,
}

fuzz_target!(|data: &[u8]| {
    // The server hands the decoder text frames only; tungstenite has checked the UTF-8.
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = peek_id(text);
    match ClientFrame::decode(text) {
        Ok(frame) => {
            // Only a string names a message: no number, no other JSON value.
            let tag: Tag = serde_json::from_str(text).expect("a decoded frame has a type");
            assert!(tag.ty.get().starts_with('"'), "non-string type decoded: {text:?}");
            let again = serde_json::to_string(&frame).expect("a decoded frame serializes");
            assert_eq!(ClientFrame::decode(&again).ok(), Some(frame), "round trip of {text:?}");
        }
        Err(e) => assert!(!e.message.is_empty(), "a refusal says why"),
    }
});
