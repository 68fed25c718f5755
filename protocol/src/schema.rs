//! JSON Schemas of both directions of the protocol, generated from the types.
//! The committed copies live in `protocol/schema/`; a test keeps them fresh.

use serde_json::Value;

/// The schema of every frame a client may send (`ClientFrame`).
pub fn client_schema() -> String {
    pretty(schemars::schema_for!(crate::message::ClientFrame))
}

/// The schema of every frame the server sends (`ServerMessage`). The contract
/// says every field is always present (`null` when it has no value), except
/// `id` and `retry_after_ms` (only on the replies that carry them) and an
/// `error`'s `game_id` (only on `invalid_token` for a game that ended): so
/// every other property is required.
pub fn server_schema() -> String {
    let mut schema =
        serde_json::to_value(schemars::schema_for!(crate::message::ServerMessage)).unwrap_or_default();
    require_all_but_optional(&mut schema);
    pretty(schema)
}

/// The only server fields that may be absent.
const OPTIONAL: [&str; 2] = ["id", "retry_after_ms"];

/// Fields that may be absent from one message type only (elsewhere, as
/// `game_over`'s `game_id`, they are always there).
const OPTIONAL_IN: [(&str, &str); 1] = [("error", "game_id")];

fn require_all_but_optional(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = map.get("properties") {
                let kind = props.get("type").and_then(|t| t.get("const")).and_then(Value::as_str);
                let optional_here = |k: &str| OPTIONAL_IN.iter().any(|&(t, f)| Some(t) == kind && f == k);
                let required: Vec<Value> = props
                    .keys()
                    .filter(|k| !OPTIONAL.contains(&k.as_str()) && !optional_here(k))
                    .map(|k| Value::String(k.clone()))
                    .collect();
                map.insert("required".into(), Value::Array(required));
            }
            map.values_mut().for_each(require_all_but_optional);
        }
        Value::Array(items) => items.iter_mut().for_each(require_all_but_optional),
        _ => {}
    }
}

fn pretty(schema: impl serde::Serialize) -> String {
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}
