//! Decoding a client's frame by hand, so that every refusal is in our words
//! and names its field: the frame is read once into its known fields (each
//! kept as raw JSON text), the `type` must be a JSON string, and then only
//! the fields that type uses are read, each with a rule of its own.
//!
//! Integers follow JSON Schema's meaning of "integer" (a number with no
//! fractional part: `3`, `3.0`, `-0` and `1e19` are integers); a value beyond
//! 64 bits saturates, so it is out of range by the game's rules, never a
//! parse error.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::{
    ClientFrame, ClientMessage, DecodeError, ErrorCode, HouseLevel, MAX_ID_CHARS, MAX_REASON_CHARS, RequestId,
};
use crate::clock::Fischer;

/// The fields any client message may carry; the rest are ignored.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Key {
    Type,
    Id,
    Name,
    Protocol,
    Size,
    Room,
    Row,
    Col,
    Token,
    Win,
    Bot,
    Mark,
    Challenge,
    Reason,
    Level,
    HouseAfterMs,
    Clock,
    Host,
    Players,
    Opening,
    Games,
    DurationMs,
    StartsInMs,
    Tournament,
    Other,
}

const KEYS: [(&str, Key); 24] = [
    ("type", Key::Type),
    ("id", Key::Id),
    ("name", Key::Name),
    ("protocol", Key::Protocol),
    ("size", Key::Size),
    ("room", Key::Room),
    ("row", Key::Row),
    ("col", Key::Col),
    ("token", Key::Token),
    ("win", Key::Win),
    ("bot", Key::Bot),
    ("mark", Key::Mark),
    ("challenge", Key::Challenge),
    ("reason", Key::Reason),
    ("level", Key::Level),
    ("house_after_ms", Key::HouseAfterMs),
    ("clock", Key::Clock),
    ("host", Key::Host),
    ("players", Key::Players),
    ("opening", Key::Opening),
    ("games", Key::Games),
    ("duration_ms", Key::DurationMs),
    ("starts_in_ms", Key::StartsInMs),
    ("tournament", Key::Tournament),
];

impl Key {
    fn name(self) -> &'static str {
        KEYS.iter().find(|(_, k)| *k == self).map_or("?", |(n, _)| n)
    }
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key, E> {
                Ok(KEYS.iter().find(|(n, _)| *n == s).map_or(Key::Other, |(_, k)| *k))
            }
        }
        d.deserialize_identifier(KeyVisitor)
    }
}

/// A frame's known fields as raw JSON, before any of them is interpreted.
#[derive(Default)]
struct Fields<'a> {
    raw: [Option<&'a RawValue>; KEYS.len()],
    /// A known field that appeared twice.
    twice: Option<Key>,
}

impl<'a> Fields<'a> {
    fn get(&self, key: Key) -> Option<&'a RawValue> {
        KEYS.iter().position(|(_, k)| *k == key).and_then(|i| self.raw[i])
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Fields<'a> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Fields<'a>, D::Error> {
        struct FieldsVisitor<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for FieldsVisitor<'a> {
            type Value = Fields<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Fields<'a>, M::Error> {
                let mut fields = Fields::default();
                while let Some(key) = map.next_key::<Key>()? {
                    let Some(i) = KEYS.iter().position(|(_, k)| *k == key) else {
                        map.next_value::<IgnoredAny>()?;
                        continue;
                    };
                    let value: &'de RawValue = map.next_value()?;
                    if fields.raw[i].replace(value).is_some() && fields.twice.is_none() {
                        fields.twice = Some(key);
                    }
                }
                Ok(fields)
            }
        }
        d.deserialize_map(FieldsVisitor(std::marker::PhantomData))
    }
}

/// Why a frame is refused, before the `id` is attached: `bad_message`
/// unless a field has a code of its own.
struct Refusal {
    code: ErrorCode,
    text: String,
}

impl From<String> for Refusal {
    fn from(text: String) -> Refusal {
        Refusal { code: ErrorCode::BadMessage, text }
    }
}

impl From<&str> for Refusal {
    fn from(text: &str) -> Refusal {
        Refusal::from(text.to_owned())
    }
}

/// Reads the frame's fields, or says why it is not a JSON object.
fn fields(text: &str) -> Result<Fields<'_>, String> {
    match serde_json::from_str::<Fields>(text) {
        Ok(fields) => Ok(fields),
        Err(e) if e.is_data() => Err("expected a JSON object with a \"type\" field".into()),
        Err(e) => Err(format!(
            "not valid JSON (at line {}, column {}); send one JSON object per text frame",
            e.line(),
            e.column()
        )),
    }
}

impl ClientFrame {
    /// Decodes one text frame. A frame that is not a JSON object with a known
    /// string `type` and well-typed fields is a [`DecodeError`] (`bad_message`)
    /// whose message names the field at fault.
    pub fn decode(text: &str) -> Result<ClientFrame, DecodeError> {
        let fields =
            fields(text).map_err(|message| DecodeError { code: ErrorCode::BadMessage, message, id: None })?;
        let id = request_id(fields.get(Key::Id));
        let valid_id = id.clone().ok().flatten();
        let refuse = |r: Refusal| DecodeError { code: r.code, message: r.text, id: valid_id.clone() };
        if let Some(key) = fields.twice {
            return Err(refuse(format!("the field \"{}\" appears twice", key.name()).into()));
        }
        let message = message(&fields).map_err(refuse)?;
        let id = id.map_err(|text| refuse(text.into()))?;
        Ok(ClientFrame { id, message })
    }
}

/// The valid `id` of a frame, if it has one, without reading the rest: for
/// replies to frames that are refused before they are read.
pub fn peek_id(text: &str) -> Option<RequestId> {
    fields(text).ok().and_then(|f| request_id(f.get(Key::Id)).ok().flatten())
}

fn request_id(raw: Option<&RawValue>) -> Result<Option<RequestId>, String> {
    let bad = || format!("\"id\" must be an integer or a string of at most {MAX_ID_CHARS} characters");
    let Some(raw) = raw.filter(|r| r.get() != "null") else {
        return Ok(None);
    };
    if let Ok(s) = serde_json::from_str::<String>(raw.get()) {
        return if s.chars().count() > MAX_ID_CHARS { Err(bad()) } else { Ok(Some(RequestId::Str(s))) };
    }
    match integer(raw.get()) {
        // An id is echoed as it came: one that does not fit 64 bits cannot be.
        Some(Int::Fits(n)) => Ok(Some(RequestId::Int(n))),
        _ => Err(bad()),
    }
}

/// The message that the `type` names, with its fields read.
fn message(fields: &Fields) -> Result<ClientMessage, Refusal> {
    let Some(raw) = fields.get(Key::Type) else {
        return Err("missing the field \"type\" (a string such as \"move\")".into());
    };
    // Escaped strings cannot be borrowed; they are rare enough to copy.
    let kind: Cow<str> = match serde_json::from_str::<&str>(raw.get()) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => match serde_json::from_str::<String>(raw.get()) {
            Ok(s) => Cow::Owned(s),
            Err(_) => return Err("the field \"type\" must be a string, such as \"move\"".into()),
        },
    };
    let read = Reader { kind: &kind, fields };
    Ok(match &*kind {
        "hello" => ClientMessage::Hello {
            name: read.string(Key::Name)?,
            protocol: read.opt_int(Key::Protocol)?,
            token: read.opt_string(Key::Token)?,
        },
        "register" => ClientMessage::Register {
            name: read.string(Key::Name)?,
            bot: read.opt_bool(Key::Bot)?.unwrap_or(false),
        },
        "quick_match" => ClientMessage::QuickMatch {
            size: read.opt_int(Key::Size)?,
            win: read.opt_int(Key::Win)?,
            house_after_ms: read.opt_duration(Key::HouseAfterMs)?,
            level: read.opt_level(Key::Level)?,
            clock: read.opt_clock()?,
        },
        "create_room" => ClientMessage::CreateRoom {
            size: read.opt_int(Key::Size)?,
            win: read.opt_int(Key::Win)?,
            mark: read.opt_mark(Key::Mark)?,
            clock: read.opt_clock()?,
            host: read.opt_bool(Key::Host)?.unwrap_or(false),
            players: read.opt_players()?,
            opening: read.opt_moves(Key::Opening)?,
            games: read.opt_count(Key::Games)?,
        },
        "join_room" => ClientMessage::JoinRoom { room: read.string(Key::Room)? },
        "spectate" => ClientMessage::Spectate { room: read.string(Key::Room)? },
        "move" => ClientMessage::Move { row: read.int(Key::Row)?, col: read.int(Key::Col)? },
        "resign" => ClientMessage::Resign {},
        "rematch" => ClientMessage::Rematch {},
        "leave" => ClientMessage::Leave {},
        "resume" => ClientMessage::Resume { token: read.string(Key::Token)? },
        "sync" => ClientMessage::Sync {},
        "ping" => ClientMessage::Ping {},
        "challenge" => ClientMessage::Challenge {
            name: read.string(Key::Name)?,
            size: read.opt_int(Key::Size)?,
            win: read.opt_int(Key::Win)?,
            clock: read.opt_clock()?,
        },
        "accept" => ClientMessage::Accept { challenge: read.string(Key::Challenge)? },
        "decline" => ClientMessage::Decline {
            challenge: read.string(Key::Challenge)?,
            reason: read.opt_reason(Key::Reason)?,
        },
        "who" => ClientMessage::Who {},
        "play_house" => ClientMessage::PlayHouse {
            size: read.opt_int(Key::Size)?,
            win: read.opt_int(Key::Win)?,
            level: read.opt_level(Key::Level)?,
            clock: read.opt_clock()?,
        },
        "tournament_create" => ClientMessage::TournamentCreate {
            name: read.string(Key::Name)?,
            size: read.opt_int(Key::Size)?,
            win: read.opt_int(Key::Win)?,
            clock: read.opt_clock().map_err(|r| Refusal { code: ErrorCode::InvalidTournament, ..r })?,
            duration_ms: read.opt_int(Key::DurationMs)?,
            starts_in_ms: read.opt_int(Key::StartsInMs)?,
        },
        "tournaments" => ClientMessage::Tournaments {},
        "tournament_join" => ClientMessage::TournamentJoin { tournament: read.tournament()? },
        "tournament_leave" => ClientMessage::TournamentLeave { tournament: read.tournament()? },
        "tournament_watch" => ClientMessage::TournamentWatch { tournament: read.tournament()? },
        "berserk" => ClientMessage::Berserk {},
        other => {
            let shown: String = other.chars().take(40).collect();
            return Err(format!("unknown type {shown:?}; the message types are listed in PROTOCOL.md").into());
        }
    })
}

/// Reads the fields of one message type, naming the type and field in refusals.
struct Reader<'a, 'b> {
    kind: &'a str,
    fields: &'a Fields<'b>,
}

impl Reader<'_, '_> {
    fn missing(&self, key: Key, what: &str) -> Refusal {
        format!("\"{}\" needs the field \"{}\" ({what})", self.kind, key.name()).into()
    }

    fn mistyped(&self, key: Key, what: &str) -> Refusal {
        format!("the field \"{}\" of \"{}\" must be {what}", key.name(), self.kind).into()
    }

    /// A tournament's id: the field `tournament`, else the frame's `id` (a string).
    fn tournament(&self) -> Result<String, Refusal> {
        match self.opt_string(Key::Tournament)? {
            Some(id) => Ok(id),
            None => self
                .opt_string(Key::Id)
                .ok()
                .flatten()
                .ok_or_else(|| self.missing(Key::Id, "the tournament's id, a string")),
        }
    }

    fn string(&self, key: Key) -> Result<String, Refusal> {
        let raw = self.fields.get(key).ok_or_else(|| self.missing(key, "a string"))?;
        serde_json::from_str::<String>(raw.get()).map_err(|_| self.mistyped(key, "a string"))
    }

    fn int(&self, key: Key) -> Result<i64, Refusal> {
        let raw = self.fields.get(key).ok_or_else(|| self.missing(key, "an integer"))?;
        integer(raw.get()).map(Int::saturated).ok_or_else(|| self.mistyped(key, "an integer"))
    }

    /// An optional string: absent and `null` are both `None`.
    fn opt_string(&self, key: Key) -> Result<Option<String>, Refusal> {
        match self.fields.get(key) {
            None => Ok(None),
            Some(raw) if raw.get() == "null" => Ok(None),
            Some(_) => self.string(key).map(Some),
        }
    }

    /// An optional mark, `"X"` or `"O"` (either case): absent and `null` are both `None`.
    fn opt_mark(&self, key: Key) -> Result<Option<crate::Player>, Refusal> {
        match self.opt_string(key).map_err(|_| self.mistyped(key, "\"X\" or \"O\""))?.as_deref() {
            None => Ok(None),
            Some("X" | "x") => Ok(Some(crate::Player::X)),
            Some("O" | "o") => Ok(Some(crate::Player::O)),
            Some(_) => Err(self.mistyped(key, "\"X\" or \"O\"")),
        }
    }

    /// An optional short text (a decline's reason): absent and `null` are both `None`.
    fn opt_reason(&self, key: Key) -> Result<Option<String>, Refusal> {
        let what = format!("a string of at most {MAX_REASON_CHARS} characters");
        match self.opt_string(key).map_err(|_| self.mistyped(key, &what))? {
            Some(s) if s.chars().count() > MAX_REASON_CHARS => Err(self.mistyped(key, &what)),
            other => Ok(other),
        }
    }

    /// An optional house level by name: absent and `null` are both `None`.
    fn opt_level(&self, key: Key) -> Result<Option<HouseLevel>, Refusal> {
        let what = "\"random\", \"heuristic\" or \"perfect\"";
        match self.opt_string(key).map_err(|_| self.mistyped(key, what))? {
            None => Ok(None),
            Some(name) => HouseLevel::from_name(&name).map(Some).ok_or_else(|| self.mistyped(key, what)),
        }
    }

    /// An optional number of milliseconds, 0 or more: absent and `null` are both `None`.
    fn opt_duration(&self, key: Key) -> Result<Option<i64>, Refusal> {
        match self.opt_int(key).map_err(|_| self.mistyped(key, "a non-negative integer"))? {
            Some(ms) if ms < 0 => Err(self.mistyped(key, "a non-negative integer")),
            other => Ok(other),
        }
    }

    /// An optional Fischer clock, `{"initial_ms": N, "increment_ms": M}`:
    /// absent and `null` are both `None`; anything else that is not a
    /// clock within the ranges is refused with `invalid_clock`.
    fn opt_clock(&self) -> Result<Option<Fischer>, Refusal> {
        /// The clock's own fields, still raw.
        #[derive(Deserialize)]
        struct Raw<'a> {
            #[serde(borrow, default)]
            initial_ms: Option<&'a RawValue>,
            #[serde(borrow, default)]
            increment_ms: Option<&'a RawValue>,
        }
        let Some(raw) = self.fields.get(Key::Clock).filter(|r| r.get() != "null") else {
            return Ok(None);
        };
        let refuse = |text: String| Refusal { code: ErrorCode::InvalidClock, text };
        let raw: Raw = match serde_json::from_str(raw.get()) {
            Ok(parsed) if raw.get().starts_with('{') => parsed,
            _ => return Err(refuse(Fischer::field_refusal("clock"))),
        };
        let int = |v: Option<&RawValue>| v.and_then(|v| integer(v.get())).map(Int::saturated);
        Fischer::checked(int(raw.initial_ms), int(raw.increment_ms)).map(Some).map_err(refuse)
    }

    /// An optional pair of names `[X, O]`: absent and `null` are both `None`.
    fn opt_players(&self) -> Result<Option<[String; 2]>, Refusal> {
        let what = "a list of two names, [X, O]";
        match self.fields.get(Key::Players).filter(|r| r.get() != "null") {
            None => Ok(None),
            Some(raw) => serde_json::from_str::<[String; 2]>(raw.get())
                .map(Some)
                .map_err(|_| self.mistyped(Key::Players, what)),
        }
    }

    /// An optional list of moves `[[row, col], ...]` of integers (saturated
    /// beyond 64 bits, as `move`'s): absent and `null` are both `None`.
    fn opt_moves(&self, key: Key) -> Result<Option<Vec<[i64; 2]>>, Refusal> {
        let what = "a list of moves [[row, col], ...] of integers";
        let Some(raw) = self.fields.get(key).filter(|r| r.get() != "null") else {
            return Ok(None);
        };
        let cells: Vec<[&RawValue; 2]> =
            serde_json::from_str(raw.get()).map_err(|_| self.mistyped(key, what))?;
        let int = |v: &RawValue| integer(v.get()).map(Int::saturated).ok_or_else(|| self.mistyped(key, what));
        cells.iter().map(|[r, c]| Ok([int(r)?, int(c)?])).collect::<Result<_, _>>().map(Some)
    }

    /// An optional count, 1 or more: absent and `null` are both `None`.
    fn opt_count(&self, key: Key) -> Result<Option<i64>, Refusal> {
        match self.opt_int(key).map_err(|_| self.mistyped(key, "a positive integer"))? {
            Some(n) if n < 1 => Err(self.mistyped(key, "a positive integer")),
            other => Ok(other),
        }
    }

    /// An optional boolean: absent and `null` are both `None`.
    fn opt_bool(&self, key: Key) -> Result<Option<bool>, Refusal> {
        match self.fields.get(key).map(|raw| raw.get()) {
            None | Some("null") => Ok(None),
            Some("true") => Ok(Some(true)),
            Some("false") => Ok(Some(false)),
            Some(_) => Err(self.mistyped(key, "true or false")),
        }
    }

    /// An optional integer: absent and `null` are both `None`.
    fn opt_int(&self, key: Key) -> Result<Option<i64>, Refusal> {
        match self.fields.get(key) {
            None => Ok(None),
            Some(raw) if raw.get() == "null" => Ok(None),
            Some(_) => self.int(key).map(Some),
        }
    }
}

/// A JSON integer: within 64 bits, or beyond them on one side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Int {
    Fits(i64),
    Above,
    Below,
}

impl Int {
    /// The nearest 64-bit value: beyond the range is as far as it goes.
    fn saturated(self) -> i64 {
        match self {
            Int::Fits(n) => n,
            Int::Above => i64::MAX,
            Int::Below => i64::MIN,
        }
    }
}

/// The integer that a JSON value's text stands for, if it is a number with
/// no fractional part (`-0`, `3.0`, `1e3` and `12345678901234567890` are).
/// The text is already known to be valid JSON.
fn integer(text: &str) -> Option<Int> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    if !rest.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, "0"),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    // Every digit, and the power of ten that the last one stands for.
    let digits = whole.bytes().chain(fraction.bytes());
    let exponent: i64 = match exponent.strip_prefix('+').unwrap_or(exponent).parse::<i64>() {
        Ok(e) => e,
        // More digits than fit: a huge exponent either way.
        Err(_) if exponent.starts_with('-') => i64::MIN / 2,
        Err(_) => i64::MAX / 2,
    };
    let mut scale = exponent.saturating_sub(fraction.len() as i64);
    // Trailing zeros raise the scale; leading zeros change nothing.
    let significant: Vec<u8> = digits.skip_while(|&d| d == b'0').collect();
    let zeros = significant.iter().rev().take_while(|&&d| d == b'0').count();
    let significant = &significant[..significant.len() - zeros];
    if significant.is_empty() {
        return Some(Int::Fits(0));
    }
    scale = scale.saturating_add(zeros as i64);
    if scale < 0 {
        return None;
    }
    let beyond = if negative { Int::Below } else { Int::Above };
    // 2^63 has 19 digits: anything longer is beyond 64 bits.
    if scale.saturating_add(significant.len() as i64) > 19 {
        return Some(beyond);
    }
    let mut magnitude: i128 = 0;
    for &d in significant {
        magnitude = magnitude * 10 + i128::from(d - b'0');
    }
    magnitude *= 10i128.pow(scale as u32);
    let value = if negative { -magnitude } else { magnitude };
    Some(i64::try_from(value).map_or(beyond, Int::Fits))
}

#[cfg(test)]
mod tests {
    use super::{Int, integer};

    #[test]
    fn integers_are_numbers_without_a_fraction() {
        let cases = [
            ("0", Some(Int::Fits(0))),
            ("-0", Some(Int::Fits(0))),
            ("-0.0e5", Some(Int::Fits(0))),
            ("7", Some(Int::Fits(7))),
            ("-7", Some(Int::Fits(-7))),
            ("3.0", Some(Int::Fits(3))),
            ("1e3", Some(Int::Fits(1000))),
            ("1E+3", Some(Int::Fits(1000))),
            ("2500e-2", Some(Int::Fits(25))),
            ("0.5e1", Some(Int::Fits(5))),
            ("9223372036854775807", Some(Int::Fits(i64::MAX))),
            ("-9223372036854775808", Some(Int::Fits(i64::MIN))),
            ("9223372036854775808", Some(Int::Above)),
            ("-9223372036854775809", Some(Int::Below)),
            ("18446744073709551616", Some(Int::Above)),
            ("-18446744073709551616", Some(Int::Below)),
            ("1e19", Some(Int::Above)),
            ("1e400", Some(Int::Above)),
            ("-1e99999999999999999999", Some(Int::Below)),
            ("1.5", None),
            ("25e-2", None),
            ("1e-99999999999999999999", None),
            ("\"3\"", None),
            ("true", None),
            ("null", None),
            ("[1]", None),
        ];
        for (text, want) in cases {
            assert_eq!(integer(text), want, "{text}");
        }
    }
}
