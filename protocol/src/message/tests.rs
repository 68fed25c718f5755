use super::*;
use crate::Player;
use crate::clock::Fischer;
use crate::game::LineKind;
use serde_json::{Value, json};

fn client(text: &str) -> ClientFrame {
    ClientFrame::decode(text).unwrap()
}

#[test]
fn every_client_message_decodes_from_contract_json() {
    let cases: Vec<(&str, ClientMessage)> = vec![
        (
            r#"{"type":"hello","name":"ann","protocol":1}"#,
            ClientMessage::Hello { name: "ann".into(), protocol: Some(1), token: None },
        ),
        (
            r#"{"type":"hello","name":"bob"}"#,
            ClientMessage::Hello { name: "bob".into(), protocol: None, token: None },
        ),
        (
            r#"{"type":"hello","name":"bob","token":"ttt_00"}"#,
            ClientMessage::Hello { name: "bob".into(), protocol: None, token: Some("ttt_00".into()) },
        ),
        (
            r#"{"type":"register","name":"cy","bot":false}"#,
            ClientMessage::Register { name: "cy".into(), bot: false },
        ),
        (
            r#"{"type":"register","name":"cy","bot":true}"#,
            ClientMessage::Register { name: "cy".into(), bot: true },
        ),
        (
            r#"{"type":"quick_match"}"#,
            ClientMessage::QuickMatch {
                clock: None,
                size: None,
                win: None,
                house_after_ms: None,
                level: None,
            },
        ),
        (
            r#"{"type":"quick_match","size":5}"#,
            ClientMessage::QuickMatch {
                clock: None,
                size: Some(5),
                win: None,
                house_after_ms: None,
                level: None,
            },
        ),
        (
            r#"{"type":"create_room","size":4}"#,
            ClientMessage::CreateRoom {
                players: None,
                games: None,
                host: false,
                opening: None,
                clock: None,
                size: Some(4),
                win: None,
                mark: None,
            },
        ),
        (
            r#"{"type":"create_room","size":4,"mark":"O"}"#,
            ClientMessage::CreateRoom {
                players: None,
                games: None,
                host: false,
                opening: None,
                clock: None,
                size: Some(4),
                win: None,
                mark: Some(Player::O),
            },
        ),
        (
            r#"{"type":"quick_match","size":15,"win":5}"#,
            ClientMessage::QuickMatch {
                clock: None,
                size: Some(15),
                win: Some(5),
                house_after_ms: None,
                level: None,
            },
        ),
        (r#"{"type":"join_room","room":"ABCD"}"#, ClientMessage::JoinRoom { room: "ABCD".into() }),
        (r#"{"type":"spectate","room":"ABCD"}"#, ClientMessage::Spectate { room: "ABCD".into() }),
        (r#"{"type":"move","row":1,"col":2}"#, ClientMessage::Move { row: 1, col: 2 }),
        (r#"{"type":"move","row":-1,"col":2}"#, ClientMessage::Move { row: -1, col: 2 }),
        (r#"{"type":"resign"}"#, ClientMessage::Resign {}),
        (r#"{"type":"rematch"}"#, ClientMessage::Rematch {}),
        (r#"{"type":"leave"}"#, ClientMessage::Leave {}),
        (r#"{"type":"resume","token":"abc"}"#, ClientMessage::Resume { token: "abc".into() }),
        (r#"{"type":"sync"}"#, ClientMessage::Sync {}),
        (r#"{"type":"ping"}"#, ClientMessage::Ping {}),
        (
            r#"{"type":"challenge","name":"Bob"}"#,
            ClientMessage::Challenge { clock: None, name: "Bob".into(), size: None, win: None },
        ),
        (
            r#"{"type":"challenge","name":"bob","size":15,"win":5}"#,
            ClientMessage::Challenge { clock: None, name: "bob".into(), size: Some(15), win: Some(5) },
        ),
        (r#"{"type":"accept","challenge":"c1"}"#, ClientMessage::Accept { challenge: "c1".into() }),
        (
            r#"{"type":"decline","challenge":"c1"}"#,
            ClientMessage::Decline { challenge: "c1".into(), reason: None },
        ),
        (
            r#"{"type":"decline","challenge":"c1","reason":"only 3x3"}"#,
            ClientMessage::Decline { challenge: "c1".into(), reason: Some("only 3x3".into()) },
        ),
        (r#"{"type":"who"}"#, ClientMessage::Who {}),
        (
            r#"{"type":"quick_match","house_after_ms":5000,"level":"random"}"#,
            ClientMessage::QuickMatch {
                clock: None,
                size: None,
                win: None,
                house_after_ms: Some(5000),
                level: Some(HouseLevel::Random),
            },
        ),
        (
            r#"{"type":"play_house"}"#,
            ClientMessage::PlayHouse { clock: None, size: None, win: None, level: None },
        ),
        (
            r#"{"type":"play_house","size":4,"win":3,"level":"heuristic"}"#,
            ClientMessage::PlayHouse {
                clock: None,
                size: Some(4),
                win: Some(3),
                level: Some(HouseLevel::Heuristic),
            },
        ),
    ];
    for (text, message) in cases {
        let frame = client(text);
        assert_eq!(frame, ClientFrame { id: None, message: message.clone() }, "{text}");
        // And back: the encoding is the same JSON object.
        let again: Value = serde_json::to_value(&frame).unwrap();
        let mut want: Value = serde_json::from_str(text).unwrap();
        if let Value::Object(m) = &mut want {
            m.retain(|_, v| !v.is_null());
        }
        let mut again = again;
        if let Value::Object(m) = &mut again {
            m.retain(|_, v| !v.is_null());
        }
        assert_eq!(again, want, "{text}");
    }
}

#[test]
fn ids_unknown_fields_and_field_order() {
    let f = client(r#"{"col":0,"id":7,"extra":{"x":1},"row":2,"type":"move"}"#);
    assert_eq!(f.id, Some(RequestId::Int(7)));
    assert_eq!(f.message, ClientMessage::Move { row: 2, col: 0 });
    let f = client(r#"{"type":"ping","id":"req-1"}"#);
    assert_eq!(f.id, Some(RequestId::Str("req-1".into())));
}

#[test]
fn bad_messages_are_errors_that_keep_the_id() {
    for text in [
        "not json",
        "[1,2]",
        "42",
        r#"{"type":"dance","id":3}"#,
        r#"{"type":"move","row":1,"id":3}"#,
        r#"{"type":"move","row":"a","col":1,"id":3}"#,
        r#"{"type":"move","row":1.5,"col":1,"id":3}"#,
        r#"{"row":1,"col":1,"id":3}"#,
    ] {
        let err = ClientFrame::decode(text).unwrap_err();
        assert!(!err.message.is_empty());
        if text.contains("\"id\":3") {
            assert_eq!(err.id, Some(RequestId::Int(3)), "{text}");
        }
    }
    let long = format!(r#"{{"type":"ping","id":"{}"}}"#, "x".repeat(65));
    assert!(ClientFrame::decode(&long).is_err());
    let err = ClientFrame::decode(r#"{"type":"dance"}"#).unwrap_err();
    assert!(err.message.contains("dance"), "{}", err.message);
}

fn server_json(m: &ServerMessage) -> Value {
    let text = m.to_json();
    let back: ServerMessage = serde_json::from_str(&text).unwrap();
    assert_eq!(&back, m);
    serde_json::from_str(&text).unwrap()
}

#[test]
fn every_server_message_encodes_to_contract_json() {
    let room: Arc<str> = Arc::from("K7QM3XPA2B");
    let players = vec![
        PlayerInfo::guest("ann"),
        PlayerInfo { name: "bob".into(), account: true, bot: true, rating: Some(1612) },
    ];
    let cases: Vec<(ServerMessage, Value)> = vec![
        (
            ServerMessage::Welcome {
                protocol: 1,
                server: "ttt-server/0.1.0".into(),
                limits: Limits {
                    min_size: 2,
                    max_size: 100,
                    turn_timeout_ms: 30000,
                    reconnect_grace_ms: 30000,
                    max_message_bytes: 4096,
                    max_messages_per_second: 50,
                    ping_interval_ms: 15000,
                    handshake_timeout_ms: 5000,
                },
            },
            json!({"type":"welcome","protocol":1,"server":"ttt-server/0.1.0","limits":{
                "min_size":2,"max_size":100,"turn_timeout_ms":30000,"reconnect_grace_ms":30000,
                "max_message_bytes":4096,"max_messages_per_second":50,"ping_interval_ms":15000,
                "handshake_timeout_ms":5000}}),
        ),
        (
            ServerMessage::Queued { clock: None, size: 3, win: 3, id: Some(RequestId::Int(1)) },
            json!({"type":"queued","clock":null,"size":3,"win":3,"id":1}),
        ),
        (
            ServerMessage::RoomCreated { clock: None, room: room.clone(), size: 15, win: 5, id: None },
            json!({"type":"room_created","clock":null,"room":"K7QM3XPA2B","size":15,"win":5}),
        ),
        (
            ServerMessage::GameStarted {
                tournament: None,
                moves: Vec::new(),
                opening: 0,
                clock: None,
                clocks: None,
                running: None,
                room: room.clone(),
                size: 3,
                win: 3,
                you: Player::O,
                mark: Player::O,
                players: players.clone(),
                turn: Player::X,
                resume_token: "00ff".into(),
                turn_timeout_ms: 30000,
            },
            json!({"type":"game_started","clock":null,"clocks":null,"running":null,"opening":0,"moves":[],"tournament":null,"room":"K7QM3XPA2B","size":3,"win":3,"you":2,"mark":"O",
                "players":[{"name":"ann","account":false,"bot":false,"rating":null},
                    {"name":"bob","account":true,"bot":true,"rating":1612}],"turn":1,"resume_token":"00ff",
                "turn_timeout_ms":30000}),
        ),
        (
            ServerMessage::Moved {
                clocks: None,
                running: None,
                room: room.clone(),
                row: 1,
                col: 2,
                player: Player::X,
                seq: 1,
                next: Some(Player::O),
                clock_ms: Some(30000),
                id: Some(RequestId::Str("m1".into())),
            },
            json!({"type":"moved","clocks":null,"running":null,"room":"K7QM3XPA2B","row":1,"col":2,"player":1,"seq":1,
                "next":2,"clock_ms":30000,"id":"m1"}),
        ),
        (
            ServerMessage::Moved {
                clocks: None,
                running: None,
                room: room.clone(),
                row: 0,
                col: 0,
                player: Player::O,
                seq: 9,
                next: None,
                clock_ms: None,
                id: None,
            },
            json!({"type":"moved","clocks":null,"running":null,"room":"K7QM3XPA2B","row":0,"col":0,"player":2,"seq":9,
                "next":null,"clock_ms":null}),
        ),
        (
            ServerMessage::GameOver {
                clocks: None,
                running: None,
                room: room.clone(),
                winner: Some(Player::X),
                reason: EndReason::Line,
                line: Some(Line { kind: LineKind::AntiDiag, index: 0, start: [0, 2], len: 3 }),
                moves: vec![[0, 2], [0, 0], [1, 1], [0, 1], [2, 0]],
                game_id: Some("aB3dE5gH".into()),
                ratings: Some([
                    RatingChange { before: 1500, after: 1662 },
                    RatingChange { before: 1500, after: 1338 },
                ]),
            },
            json!({"type":"game_over","clocks":null,"running":null,"room":"K7QM3XPA2B","winner":1,"reason":"line",
                "line":{"kind":"anti_diag","index":0,"cells":[[0,2],[1,1],[2,0]]},
                "moves":[[0,2],[0,0],[1,1],[0,1],[2,0]],"game_id":"aB3dE5gH",
                "ratings":[{"before":1500,"after":1662},{"before":1500,"after":1338}]}),
        ),
        (
            ServerMessage::GameOver {
                clocks: None,
                running: None,
                room: room.clone(),
                winner: None,
                reason: EndReason::Shutdown,
                line: None,
                moves: vec![],
                game_id: None,
                ratings: None,
            },
            json!({"type":"game_over","clocks":null,"running":null,"room":"K7QM3XPA2B","winner":0,"reason":"shutdown",
                "line":null,"moves":[],"game_id":null,"ratings":null}),
        ),
        (
            ServerMessage::State {
                berserk: [false; 2],
                tournament: None,
                host: None,
                opening: 0,
                reserved: None,
                clock: None,
                clocks: None,
                running: None,
                room: room.clone(),
                size: 2,
                win: 2,
                board: vec!["X.".into(), "..".into()],
                moves: vec![[0, 0]],
                turn: Some(Player::O),
                players: players.clone(),
                you: None,
                clock_ms: Some(1200),
                id: None,
            },
            json!({"type":"state","clock":null,"clocks":null,"running":null,"opening":0,"host":null,"reserved":null,"tournament":null,"berserk":[false,false],"room":"K7QM3XPA2B","size":2,"win":2,"board":["X.",".."],
                "moves":[[0,0]],"turn":2,"players":[{"name":"ann","account":false,"bot":false,"rating":null},
                    {"name":"bob","account":true,"bot":true,"rating":1612}],
                "you":null,"clock_ms":1200}),
        ),
        (
            ServerMessage::OpponentDisconnected { grace_ms: 30000 },
            json!({"type":"opponent_disconnected","grace_ms":30000}),
        ),
        (ServerMessage::OpponentReconnected {}, json!({"type":"opponent_reconnected"})),
        (ServerMessage::RematchOffered {}, json!({"type":"rematch_offered"})),
        (
            ServerMessage::RoomClosed { room: room.clone(), reason: ClosedReason::Left },
            json!({"type":"room_closed","room":"K7QM3XPA2B","reason":"left"}),
        ),
        (
            ServerMessage::RoomClosed { room: room.clone(), reason: ClosedReason::Disconnect },
            json!({"type":"room_closed","room":"K7QM3XPA2B","reason":"disconnect"}),
        ),
        (
            ServerMessage::Error {
                code: ErrorCode::RateLimited,
                message: "slow down".into(),
                id: None,
                retry_after_ms: Some(20),
                game_id: None,
            },
            json!({"type":"error","code":"rate_limited","message":"slow down","retry_after_ms":20}),
        ),
        (ServerMessage::Pong { id: Some(RequestId::Int(5)) }, json!({"type":"pong","id":5})),
        (
            ServerMessage::ChallengeSent {
                clock: None,
                challenge: "c7".into(),
                name: "bob".into(),
                size: 3,
                win: 3,
                id: Some(RequestId::Int(2)),
            },
            json!({"type":"challenge_sent","clock":null,"challenge":"c7","name":"bob","size":3,"win":3,"id":2}),
        ),
        (
            ServerMessage::Challenged {
                clock: None,
                challenge: "c7".into(),
                from: players[1].clone(),
                size: 15,
                win: 5,
                expires_ms: 30000,
            },
            json!({"type":"challenged","clock":null,"challenge":"c7",
                "from":{"name":"bob","account":true,"bot":true,"rating":1612},
                "size":15,"win":5,"expires_ms":30000}),
        ),
        (
            ServerMessage::ChallengeEnded {
                challenge: "c7".into(),
                reason: ChallengeEndReason::Declined,
                message: "bob declined: later".into(),
            },
            json!({"type":"challenge_ended","challenge":"c7","reason":"declined","message":"bob declined: later"}),
        ),
        (
            ServerMessage::Online {
                players: vec![OnlinePlayer {
                    name: "house".into(),
                    account: false,
                    bot: true,
                    status: OnlineStatus::Idle,
                }],
                id: None,
            },
            json!({"type":"online","players":[{"name":"house","account":false,"bot":true,"status":"idle"}]}),
        ),
        (
            ServerMessage::error(ErrorCode::NotYourTurn, "wait for moved", Some(RequestId::Int(9))),
            json!({"type":"error","code":"not_your_turn","message":"wait for moved","id":9}),
        ),
    ];
    for (message, want) in cases {
        let got = server_json(&message);
        assert!(SERVER_TYPES.contains(&got["type"].as_str().unwrap()), "{got}");
        assert_eq!(got, want);
    }
}

#[test]
fn clients_skip_server_types_they_do_not_know() {
    assert_eq!(ServerMessage::decode(r#"{"type":"news","text":"hi"}"#), Ok(None));
    assert_eq!(
        ServerMessage::decode(r#"{"type":"rematch_offered","extra":1}"#),
        Ok(Some(ServerMessage::RematchOffered {}))
    );
    // A known type with a broken payload is an error, not skipped.
    assert!(ServerMessage::decode(r#"{"type":"moved","room":"R"}"#).is_err());
}

/// The `bad_message` text for `text`, checked to be in our words.
fn refusal(text: &str) -> DecodeError {
    let err = ClientFrame::decode(text).unwrap_err();
    for leak in ["variant", "untagged", "enum", "i64", "u64", "invalid type", "struct", "serde"] {
        assert!(!err.message.contains(leak), "{text}: {:?} leaks {leak:?}", err.message);
    }
    err
}

#[test]
fn the_type_is_a_string_and_nothing_else() {
    for ty in ["5", "10", "6", "0", "true", "null", "[\"move\"]", "{\"move\":1}", "5.0"] {
        let text = format!(r#"{{"type":{ty},"row":1,"col":1,"id":4}}"#);
        let err = refusal(&text);
        assert!(err.message.contains("\"type\" must be a string"), "{text}: {}", err.message);
        assert_eq!(err.id, Some(RequestId::Int(4)));
    }
    let err = refusal(r#"{"row":1}"#);
    assert!(err.message.contains("missing the field \"type\""), "{}", err.message);
    // An escaped type is still that type.
    assert_eq!(client(r#"{"type":"p\u0069ng"}"#).message, ClientMessage::Ping {});
}

#[test]
fn integers_beyond_64_bits_are_integers_that_saturate() {
    let big = "18446744073709551616";
    let cases = [
        (format!(r#"{{"type":"move","row":{big},"col":0}}"#), ClientMessage::Move { row: i64::MAX, col: 0 }),
        (format!(r#"{{"type":"move","row":0,"col":-{big}}}"#), ClientMessage::Move { row: 0, col: i64::MIN }),
        (r#"{"type":"move","row":-0,"col":1.0}"#.to_owned(), ClientMessage::Move { row: 0, col: 1 }),
        (
            format!(r#"{{"type":"quick_match","size":{big}}}"#),
            ClientMessage::QuickMatch {
                clock: None,
                size: Some(i64::MAX),
                win: None,
                house_after_ms: None,
                level: None,
            },
        ),
        (
            r#"{"type":"create_room","size":-1e19}"#.to_owned(),
            ClientMessage::CreateRoom {
                players: None,
                games: None,
                host: false,
                opening: None,
                clock: None,
                size: Some(i64::MIN),
                win: None,
                mark: None,
            },
        ),
        (
            r#"{"type":"quick_match","size":null}"#.to_owned(),
            ClientMessage::QuickMatch {
                clock: None,
                size: None,
                win: None,
                house_after_ms: None,
                level: None,
            },
        ),
    ];
    for (text, want) in cases {
        assert_eq!(client(&text).message, want, "{text}");
    }
}

#[test]
fn every_refusal_names_its_field() {
    let cases = [
        (r#"{"type":"move","row":1}"#, "\"col\""),
        (r#"{"type":"move","row":"a","col":1}"#, "\"row\""),
        (r#"{"type":"move","row":1.5,"col":1}"#, "\"row\""),
        (r#"{"type":"move","row":1,"col":true}"#, "\"col\""),
        (r#"{"type":"hello"}"#, "\"name\""),
        (r#"{"type":"hello","name":7}"#, "\"name\""),
        (r#"{"type":"hello","name":"a","protocol":"1"}"#, "\"protocol\""),
        (r#"{"type":"quick_match","size":"3"}"#, "\"size\""),
        (r#"{"type":"create_room","win":[5]}"#, "\"win\""),
        (r#"{"type":"join_room","room":null}"#, "\"room\""),
        (r#"{"type":"resume"}"#, "\"token\""),
        (r#"{"type":"challenge","size":3}"#, "\"name\""),
        (r#"{"type":"accept"}"#, "\"challenge\""),
        (r#"{"type":"decline","challenge":5}"#, "\"challenge\""),
        (r#"{"type":"play_house","level":"godlike"}"#, "\"level\""),
        (r#"{"type":"play_house","level":3}"#, "\"level\""),
        (r#"{"type":"quick_match","house_after_ms":-1}"#, "\"house_after_ms\""),
        (r#"{"type":"quick_match","house_after_ms":"soon"}"#, "\"house_after_ms\""),
        (r#"{"type":"ping","id":1.5}"#, "\"id\""),
        (r#"{"type":"ping","id":18446744073709551616}"#, "\"id\""),
        (r#"{"type":"ping","id":[1]}"#, "\"id\""),
        (r#"{"type":"move","row":1,"row":2,"col":1}"#, "\"row\" appears twice"),
        ("not json", "not valid JSON"),
        ("[1,2]", "JSON object"),
    ];
    for (text, field) in cases {
        let err = refusal(text);
        assert!(err.message.contains(field), "{text}: {:?} should name {field}", err.message);
    }
    // Fields a type does not use are ignored, whatever they hold.
    assert_eq!(client(r#"{"type":"ping","row":"x","name":5}"#).message, ClientMessage::Ping {});
    // A good id survives a bad payload; a bad id is refused even with a good one.
    assert_eq!(refusal(r#"{"type":"move","id":"a"}"#).id, Some(RequestId::Str("a".into())));
    assert_eq!(peek_id(r#"{"type":"move","id":7}"#), Some(RequestId::Int(7)));
    assert_eq!(peek_id(r#"{"type":"move","id":7.5}"#), None);
}

#[test]
fn a_decline_reason_is_at_most_100_characters() {
    let ok = format!(r#"{{"type":"decline","challenge":"c","reason":"{}"}}"#, "é".repeat(MAX_REASON_CHARS));
    assert!(
        matches!(client(&ok).message, ClientMessage::Decline { reason: Some(r), .. } if r.chars().count() == 100)
    );
    let long =
        format!(r#"{{"type":"decline","challenge":"c","reason":"{}"}}"#, "x".repeat(MAX_REASON_CHARS + 1));
    assert!(refusal(&long).message.contains("\"reason\""));
}

#[test]
fn every_error_code_has_its_snake_case_name() {
    let codes = [
        (ErrorCode::BadMessage, "bad_message"),
        (ErrorCode::UnsupportedProtocol, "unsupported_protocol"),
        (ErrorCode::InvalidName, "invalid_name"),
        (ErrorCode::InvalidSize, "invalid_size"),
        (ErrorCode::InvalidWin, "invalid_win"),
        (ErrorCode::Busy, "busy"),
        (ErrorCode::NotInGame, "not_in_game"),
        (ErrorCode::NotYourTurn, "not_your_turn"),
        (ErrorCode::OutOfBounds, "out_of_bounds"),
        (ErrorCode::CellOccupied, "cell_occupied"),
        (ErrorCode::GameOver, "game_over"),
        (ErrorCode::RoomNotFound, "room_not_found"),
        (ErrorCode::RoomFull, "room_full"),
        (ErrorCode::InvalidToken, "invalid_token"),
        (ErrorCode::RateLimited, "rate_limited"),
        (ErrorCode::NameTaken, "name_taken"),
        (ErrorCode::AuthFailed, "auth_failed"),
        (ErrorCode::PlayerNotFound, "player_not_found"),
        (ErrorCode::ChallengeNotFound, "challenge_not_found"),
        (ErrorCode::Unavailable, "unavailable"),
        (ErrorCode::InvalidClock, "invalid_clock"),
        (ErrorCode::InvalidOpening, "invalid_opening"),
    ];
    for (code, name) in codes {
        assert_eq!(serde_json::to_value(code).unwrap(), Value::String(name.into()));
    }
}

#[test]
fn a_clock_is_two_integers_in_range_or_invalid_clock_naming_the_field() {
    let with = |clock: &str| format!(r#"{{"type":"create_room","clock":{clock},"id":7}}"#);
    let want = Fischer { initial_ms: 180_000, increment_ms: 2_000 };
    for ty in ["quick_match", "create_room", "play_house"] {
        let text = format!(r#"{{"type":"{ty}","clock":{{"initial_ms":180000,"increment_ms":2e3,"x":1}}}}"#);
        let json = serde_json::to_value(client(&text).message).unwrap();
        assert_eq!(json["clock"], serde_json::json!({"initial_ms": 180000, "increment_ms": 2000}), "{ty}");
    }
    let text = r#"{"type":"challenge","name":"ann","clock":{"initial_ms":180000,"increment_ms":2000}}"#;
    assert!(matches!(client(text).message, ClientMessage::Challenge { clock: Some(c), .. } if c == want));
    assert!(matches!(client(&with("null")).message, ClientMessage::CreateRoom { clock: None, .. }));
    for (clock, field) in [
        ("{}", "clock.initial_ms"),
        (r#"{"increment_ms":0}"#, "clock.initial_ms"),
        (r#"{"initial_ms":999,"increment_ms":0}"#, "clock.initial_ms"),
        (r#"{"initial_ms":10800001,"increment_ms":0}"#, "clock.initial_ms"),
        (r#"{"initial_ms":"60000","increment_ms":0}"#, "clock.initial_ms"),
        (r#"{"initial_ms":60000.5,"increment_ms":0}"#, "clock.initial_ms"),
        (r#"{"initial_ms":60000}"#, "clock.increment_ms"),
        (r#"{"initial_ms":60000,"increment_ms":-1}"#, "clock.increment_ms"),
        (r#"{"initial_ms":60000,"increment_ms":180001}"#, "clock.increment_ms"),
        (r#"{"initial_ms":60000,"increment_ms":1e30}"#, "clock.increment_ms"),
        ("3", "clock must be"),
        (r#""3+2""#, "clock must be"),
        ("[60000,0]", "clock must be"),
    ] {
        let err = refusal(&with(clock));
        assert_eq!(err.code, ErrorCode::InvalidClock, "{clock}");
        assert!(err.message.starts_with(field), "{clock}: {}", err.message);
        assert_eq!(err.id, Some(RequestId::Int(7)), "{clock}");
    }
    assert_eq!(refusal(r#"{"type":"create_room","size":"3"}"#).code, ErrorCode::BadMessage);
}
