//! How a batch the bus drained goes out: one envelope's worth of messages
//! per destination instance, in the order they were queued, with a frame
//! that several of that instance's connections are sent carried once.
//!
//! A room encodes a broadcast once and every recipient's queue holds the
//! same `Utf8Bytes`; the ghosts of another instance's spectators each send
//! it back as a [`Wire::Out`]. Those are merged into one [`Wire::Fanout`]
//! when that cannot reorder any connection's items: an item moves up to the
//! fanout only if nothing else for its connection lies in between, and no
//! other kind of message is ever overtaken (a [`Wire::Out`] is the only one
//! that moves).

use std::collections::HashMap;
use std::sync::Arc;

use super::{Outgoing, Wire};
use crate::cmd::Outbound;

/// The messages of `batch` by destination, each destination's in their
/// order, destinations in the order they first appear.
pub fn pack(batch: Vec<Outgoing>) -> Vec<(Arc<str>, Vec<Wire>)> {
    let mut packers: Vec<(Arc<str>, Packer)> = Vec::new();
    for Outgoing { to, msg } in batch {
        // Few destinations (a cluster's instances): a scan beats a map.
        let at = match packers.iter().position(|(t, _)| *t == to) {
            Some(at) => at,
            None => {
                packers.push((to, Packer::default()));
                packers.len() - 1
            }
        };
        packers[at].1.push(msg);
    }
    packers.into_iter().map(|(to, p)| (to, p.wires)).collect()
}

/// One destination's messages, as they are packed.
#[derive(Default)]
struct Packer {
    wires: Vec<Wire>,
    /// For each connection, the index of the last message that names it.
    last: HashMap<u64, usize>,
    /// For each frame (by where its bytes are: the same allocation is the
    /// same frame, and every frame looked up here is alive in `wires`), the
    /// index of the last message that carries it.
    frames: HashMap<(usize, usize), usize>,
    /// Messages before this index are never overtaken: the one before it
    /// is not a [`Wire::Out`].
    barrier: usize,
}

impl Packer {
    fn push(&mut self, msg: Wire) {
        let Wire::Out { conn, item } = msg else {
            self.wires.push(msg);
            self.barrier = self.wires.len();
            return;
        };
        let Outbound::Frame(frame) = item else {
            self.last.insert(conn, self.wires.len());
            self.wires.push(Wire::Out { conn, item });
            return;
        };
        let key = (frame.as_str().as_ptr() as usize, frame.len());
        let merged = self.frames.get(&key).copied().filter(|&g| {
            // Nothing for this connection after the fanout: moving its
            // item up to it keeps the connection's order.
            g >= self.barrier && self.last.get(&conn).is_none_or(|&l| l <= g)
        });
        if let Some(g) = merged {
            match &mut self.wires[g] {
                Wire::Fanout { conns, .. } => conns.push(conn),
                // This frame's bytes are the same as the other's (the same
                // allocation): either may stand for both.
                wire @ Wire::Out { .. } => {
                    let Wire::Out { conn: first, .. } = *wire else { return };
                    *wire = Wire::Fanout { conns: vec![first, conn], frame };
                }
                // `frames` names only the two above; nothing else changes.
                _ => {
                    self.last.insert(conn, self.wires.len());
                    return self.wires.push(Wire::Out { conn, item: Outbound::Frame(frame) });
                }
            }
            self.last.insert(conn, g);
            return;
        }
        let at = self.wires.len();
        self.frames.insert(key, at);
        self.last.insert(conn, at);
        self.wires.push(Wire::Out { conn, item: Outbound::Frame(frame) });
    }
}

#[cfg(test)]
mod tests {
    use tokio_tungstenite::tungstenite::Utf8Bytes;

    use super::*;

    fn out(to: &str, conn: u64, frame: &Utf8Bytes) -> Outgoing {
        Outgoing { to: to.into(), msg: Wire::Out { conn, item: Outbound::Frame(frame.clone()) } }
    }

    /// Each message named: `conn:frame`, `[conns]:frame`, or its kind.
    fn shown(wires: &[Wire]) -> Vec<String> {
        wires
            .iter()
            .map(|w| match w {
                Wire::Out { conn, item: Outbound::Frame(f) } => format!("{conn}:{f}"),
                Wire::Out { conn, item } => format!("{conn}:{item:?}"),
                Wire::Fanout { conns, frame } => format!("{conns:?}:{frame}"),
                Wire::Gone { conn } => format!("gone {conn}"),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn a_broadcast_to_many_connections_of_one_instance_crosses_once() {
        let (a, b) = (Utf8Bytes::from("moved 1"), Utf8Bytes::from("moved 2"));
        let mut batch = Vec::new();
        for frame in [&a, &b] {
            for conn in 1..=3 {
                batch.push(out("i2", conn, frame));
            }
            batch.push(out("i3", 9, frame));
        }
        let packed = pack(batch);
        assert_eq!(packed.len(), 2, "one envelope per instance");
        assert_eq!(&*packed[0].0, "i2");
        assert_eq!(shown(&packed[0].1), ["[1, 2, 3]:moved 1", "[1, 2, 3]:moved 2"]);
        assert_eq!(shown(&packed[1].1), ["9:moved 1", "9:moved 2"]);
    }

    #[test]
    fn no_connection_s_items_are_reordered() {
        let (a, b) = (Utf8Bytes::from("a"), Utf8Bytes::from("b"));
        // Connection 1 is sent a, then b, then a again: its second a must
        // not join the first.
        let batch = vec![out("i2", 1, &a), out("i2", 1, &b), out("i2", 2, &a), out("i2", 1, &a)];
        assert_eq!(shown(&pack(batch).remove(0).1), ["[1, 2]:a", "1:b", "1:a"]);
        // Another item for connection 2 in between keeps its `a` apart.
        let batch = vec![
            out("i2", 1, &a),
            Outgoing { to: "i2".into(), msg: Wire::Out { conn: 2, item: Outbound::Refused } },
            out("i2", 2, &a),
        ];
        assert_eq!(shown(&pack(batch).remove(0).1), ["1:a", "2:Refused", "2:a"]);
    }

    #[test]
    fn nothing_overtakes_another_kind_of_message() {
        let a = Utf8Bytes::from("a");
        let batch = vec![
            out("i2", 1, &a),
            Outgoing { to: "i2".into(), msg: Wire::Gone { conn: 7 } },
            out("i2", 2, &a),
        ];
        assert_eq!(shown(&pack(batch).remove(0).1), ["1:a", "gone 7", "2:a"]);
    }

    #[test]
    fn equal_text_from_different_encodings_is_not_merged_but_stays_in_order() {
        let batch = vec![out("i2", 1, &Utf8Bytes::from("a")), out("i2", 2, &Utf8Bytes::from("a"))];
        assert_eq!(shown(&pack(batch).remove(0).1), ["1:a", "2:a"]);
    }

    #[test]
    fn a_fanout_survives_the_bus_as_json() {
        let frame = Utf8Bytes::from("{\"type\":\"moved\"}");
        let env = super::super::Envelope {
            from: "i1".into(),
            run: 7,
            msgs: pack(vec![out("i2", 1, &frame), out("i2", 2, &frame)]).remove(0).1,
        };
        assert_eq!(env.items(), 2);
        let text = serde_json::to_string(&env).unwrap_or_default();
        let back: super::super::Envelope = serde_json::from_str(&text).expect("reads back");
        assert_eq!(shown(&back.msgs), ["[1, 2]:{\"type\":\"moved\"}"]);
        // Malformed or foreign payloads are refused, never a panic.
        for bad in ["", "{}", "{\"from\":\"i1\",\"run\":1,\"msg\":{\"t\":\"gone\",\"conn\":1}}", "[1,2]"] {
            assert!(serde_json::from_str::<super::super::Envelope>(bad).is_err(), "{bad}");
        }
    }
}
