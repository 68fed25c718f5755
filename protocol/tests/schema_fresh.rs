//! The committed JSON Schemas match the types. Regenerate them with
//! `UPDATE_SCHEMA=1 cargo test -p tictactoe-protocol --test schema_fresh`.

use tictactoe_protocol::schema::{client_schema, server_schema};

#[test]
fn committed_schemas_are_fresh() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schema");
    for (file, generated) in
        [("client.schema.json", client_schema()), ("server.schema.json", server_schema())]
    {
        let path = dir.join(file);
        if std::env::var_os("UPDATE_SCHEMA").is_some() {
            std::fs::create_dir_all(&dir).expect("schema dir");
            std::fs::write(&path, &generated).expect("write schema");
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == generated,
            "{} is stale: a message type changed without its schema. Run UPDATE_SCHEMA=1 cargo test -p tictactoe-protocol --test schema_fresh",
            path.display()
        );
    }
}
