//! JSON Schemas of both directions of the protocol, generated from the types.
//! The committed copies live in `protocol/schema/`; a test keeps them fresh.

use serde_json::Value;

/// The schema of every frame a client may send (`ClientFrame`).
pub fn client_schema() -> String {
    pretty(schemars::schema_for!(crate::message::ClientFrame))
}

/// The schema of every frame the server sends (`ServerMessage`). The contract
/// says every field is always present (`null` when it has no value), except
/// `id`, `retry_after_ms` and an error's `game_id` (only on the replies that
/// carry them): so every other property is required.
pub fn server_schema() -> String {
    let mut schema =
        serde_json::to_value(schemars::schema_for!(crate::message::ServerMessage)).unwrap_or_default();
    require_all_but_optional(&mut schema);
    pretty(schema)
}

/// The only server fields that may be absent (`game_id` only on `error`:
/// on `game_over` it is always there).
const OPTIONAL: [&str; 3] = ["id", "retry_after_ms", "game_id"];

/// Whether `field` may be absent from the object whose properties are `props`.
fn optional(props: &serde_json::Map<String, Value>, field: &str) -> bool {
    let is_error = props.get("type").and_then(|t| t.get("const")).is_some_and(|c| c == "error");
    OPTIONAL.contains(&field) && (field != "game_id" || is_error)
}

fn require_all_but_optional(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = map.get("properties") {
                let required: Vec<Value> = props
                    .keys()
                    .filter(|k| !optional(props, k))
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
