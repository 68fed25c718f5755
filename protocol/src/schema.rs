//! JSON Schemas of both directions of the protocol, generated from the types.
//! The committed copies live in `protocol/schema/`; a test keeps them fresh.

use serde_json::Value;

/// The schema of every frame a client may send (`ClientFrame`).
pub fn client_schema() -> String {
    pretty(schemars::schema_for!(crate::message::ClientFrame))
}

/// The schema of every frame the server sends (`ServerMessage`). The contract
/// says every field is always present (`null` when it has no value), except
/// `id`: so every property but `id` is required.
pub fn server_schema() -> String {
    let mut schema =
        serde_json::to_value(schemars::schema_for!(crate::message::ServerMessage)).unwrap_or_default();
    require_all_but_id(&mut schema);
    pretty(schema)
}

fn require_all_but_id(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = map.get("properties") {
                let required: Vec<Value> =
                    props.keys().filter(|k| *k != "id").map(|k| Value::String(k.clone())).collect();
                map.insert("required".into(), Value::Array(required));
            }
            map.values_mut().for_each(require_all_but_id);
        }
        Value::Array(items) => items.iter_mut().for_each(require_all_but_id),
        _ => {}
    }
}

fn pretty(schema: impl serde::Serialize) -> String {
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}
