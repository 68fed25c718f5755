//! Text a client writes that others will see: names, checked so that none
//! hides, disguises or reorders what is shown; and free text (a decline's
//! reason), cleaned of control characters before it is passed on.

use unicode_general_category::{GeneralCategory as G, get_general_category};

/// Longest name, in characters.
pub const MAX_NAME_CHARS: usize = 24;

/// Default_Ignorable_Code_Point, as inclusive ranges, from
/// DerivedCoreProperties.txt of the Unicode Character Database 15.0:
/// characters that render as nothing (zero-width spaces and joiners,
/// variation selectors, tags, Hangul fillers, bidirectional controls…).
const DEFAULT_IGNORABLE: &[(u32, u32)] = &[
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
];

/// Bidi_Control, from PropList.txt of the Unicode Character Database 15.0:
/// the marks, embeddings, overrides and isolates that reorder text. Every
/// one is also default-ignorable; the table is kept for free text, which
/// keeps other default-ignorables (an emoji's joiner) but never these.
const BIDI_CONTROL: &[(u32, u32)] = &[(0x061C, 0x061C), (0x200E, 0x200F), (0x202A, 0x202E), (0x2066, 0x2069)];

/// Symbols with no ink that are not default-ignorable: U+2800 BRAILLE
/// PATTERN BLANK and U+1D159 MUSICAL SYMBOL NULL NOTEHEAD, the two left on
/// the usual lists of invisible characters once the default-ignorables,
/// spaces, controls and format characters are taken out.
const BLANK_SYMBOLS: &[char] = &['\u{2800}', '\u{1D159}'];

fn in_table(table: &[(u32, u32)], c: char) -> bool {
    let c = u32::from(c);
    table
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// Whether `c` has the Unicode property Default_Ignorable_Code_Point.
pub fn is_default_ignorable(c: char) -> bool {
    in_table(DEFAULT_IGNORABLE, c)
}

/// Whether `c` has the Unicode property Bidi_Control.
pub fn is_bidi_control(c: char) -> bool {
    in_table(BIDI_CONTROL, c)
}

fn is_mark(c: char) -> bool {
    matches!(get_general_category(c), G::NonspacingMark | G::SpacingMark | G::EnclosingMark)
}

/// Whether `c` draws something of its own: a letter, number, punctuation
/// or symbol that is neither default-ignorable nor a blank symbol.
fn is_visible_base(c: char) -> bool {
    use G::*;
    let shown = matches!(
        get_general_category(c),
        UppercaseLetter
            | LowercaseLetter
            | TitlecaseLetter
            | ModifierLetter
            | OtherLetter
            | DecimalNumber
            | LetterNumber
            | OtherNumber
            | ConnectorPunctuation
            | DashPunctuation
            | OpenPunctuation
            | ClosePunctuation
            | InitialPunctuation
            | FinalPunctuation
            | OtherPunctuation
            | MathSymbol
            | CurrencySymbol
            | ModifierSymbol
            | OtherSymbol
    );
    shown && !is_default_ignorable(c) && !BLANK_SYMBOLS.contains(&c)
}

/// Checks a name (already trimmed): 1 to [`MAX_NAME_CHARS`] characters, at
/// least one visible letter, number, punctuation or symbol; no control,
/// format, default-ignorable (so no bidirectional control), unassigned,
/// private-use or blank character; no space but U+0020, never two in a row;
/// every combining mark on a character (not first, not after a space).
/// `Err` says what is wrong, naming the character at fault.
pub fn check_name(name: &str) -> Result<(), String> {
    let n = name.chars().count();
    if !(1..=MAX_NAME_CHARS).contains(&n) {
        return Err(format!("a name is 1 to {MAX_NAME_CHARS} characters (this one has {n})"));
    }
    let mut before: Option<char> = None;
    for c in name.chars() {
        let category = get_general_category(c);
        let hidden = c.is_control()
            || is_default_ignorable(c)
            || BLANK_SYMBOLS.contains(&c)
            || matches!(
                category,
                G::Format
                    | G::LineSeparator
                    | G::ParagraphSeparator
                    | G::Unassigned
                    | G::PrivateUse
                    | G::Surrogate
            );
        if hidden {
            return Err(format!(
                "a name may not contain control, format, invisible, bidirectional, unassigned or \
                 private-use characters: U+{:04X} is one",
                u32::from(c)
            ));
        }
        if category == G::SpaceSeparator && c != ' ' {
            return Err(format!(
                "the only space a name may contain is U+0020: U+{:04X} is another",
                u32::from(c)
            ));
        }
        if c == ' ' && before == Some(' ') {
            return Err("a name may not contain two spaces in a row".into());
        }
        if is_mark(c) && before.is_none_or(|b| b == ' ') {
            return Err(format!(
                "a combining mark (U+{:04X}) must follow the character it marks, not start a name or follow a space",
                u32::from(c)
            ));
        }
        before = Some(c);
    }
    if !name.chars().any(is_visible_base) {
        return Err("a name needs at least one visible letter, digit, punctuation mark or symbol".into());
    }
    Ok(())
}

/// A name's look-alike key: its confusable skeleton (Unicode TS 39, by
/// `unicode-security`), folded to lower case and skeletoned again, so that
/// `paypal` with a Cyrillic `а`, `b0b` and `bob`, `Ivan` and `lvan` share
/// one. Accounts are unique by it (beside [`crate::core::account::name_key`]);
/// keys are stored, so a new version of the confusables data may leave an
/// old account's key stale (it still holds its name by `name_key`).
pub fn look_alike_key(name: &str) -> String {
    let once: String = unicode_security::skeleton(name).collect();
    unicode_security::skeleton(&once.to_lowercase()).collect()
}

/// Free text a client wrote for others (a decline's reason): control
/// characters (C0 with ESC, DEL, C1) and bidirectional controls removed,
/// line breaks and tabs turned into spaces, trimmed; `None` when nothing is left.
pub fn clean(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let breaks =
            matches!(c, '\t' | '\n' | '\r' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}');
        if breaks {
            out.push(' ');
        } else if !c.is_control() && !is_bidi_control(c) {
            out.push(c);
        }
    }
    let trimmed = out.trim();
    (!trimmed.is_empty()).then(|| trimmed.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_are_sorted_and_hold_what_they_name() {
        for table in [DEFAULT_IGNORABLE, BIDI_CONTROL] {
            assert!(table.windows(2).all(|w| w[0].1 < w[1].0), "sorted, disjoint");
            assert!(table.iter().all(|(lo, hi)| lo <= hi));
        }
        let count: u32 = DEFAULT_IGNORABLE.iter().map(|(lo, hi)| hi - lo + 1).sum();
        // DerivedCoreProperties.txt 15.0: "Total code points: 4174".
        assert_eq!(count, 4174);
        for c in
            ['\u{AD}', '\u{34F}', '\u{115F}', '\u{3164}', '\u{FFA0}', '\u{FE0F}', '\u{200B}', '\u{E0041}']
        {
            assert!(is_default_ignorable(c), "{c:?}");
        }
        for c in ['a', ' ', '\u{2800}', '\u{300}', '\u{FFF9}', '\u{1D17B}', '\u{E1000}'] {
            assert!(!is_default_ignorable(c), "{c:?}");
        }
        for lo_hi in BIDI_CONTROL {
            for c in lo_hi.0..=lo_hi.1 {
                let c = char::from_u32(c).unwrap();
                assert!(is_bidi_control(c) && is_default_ignorable(c), "{c:?}");
            }
        }
        assert!(!is_bidi_control('\u{200B}'));
    }

    #[test]
    fn names_need_something_visible_and_nothing_hidden() {
        for good in [
            "ann",
            "Zoë the bot 🤖",
            "e\u{301}mile",
            "O'Neil-2",
            "李小龙",
            "한국",
            "ß",
            "_",
            "42",
            "ann bob",
            &"x".repeat(24),
        ] {
            assert_eq!(check_name(good), Ok(()), "{good:?}");
        }
        let bad = [
            "",
            &"x".repeat(25),
            "a\nb",
            "a\u{7}b",
            "a\u{1B}[31mred",
            "a\u{85}b",
            "\u{3164}",
            "\u{115F}",
            "\u{FFA0}",
            "\u{2800}",
            "ann\u{2800}bob",
            "\u{1D159}",
            "\u{34F}",
            "ann\u{34F}",
            "❤\u{FE0F}",
            "\u{300}",
            "\u{300}ann",
            "ann \u{301}",
            "\u{20DD}",
            "ann\u{200B}bob",
            "ann\u{200D}bob",
            "ann\u{202E}bob",
            "ann\u{2066}bob",
            "ann\u{200E}",
            "ann\u{61C}",
            "ann\u{FEFF}",
            "ann\u{AD}bob",
            "ann\u{2028}bob",
            "ann\u{E0041}",
            "ann\u{A0}bob",
            "ann\u{3000}bob",
            "ann\u{2003}bob",
            "ann  bob",
            "ann\u{E000}",
            "ann\u{378}",
            "\u{3164}\u{3164}\u{3164}",
            "\u{115F}\u{1160}",
        ];
        for name in bad {
            let err = check_name(name).expect_err(name);
            assert!(!err.is_empty());
        }
        assert!(check_name("\u{3164}").unwrap_err().contains("U+3164"));
    }

    #[test]
    fn look_alike_names_share_a_key_and_different_ones_do_not() {
        let same = [
            ("paypal", "p\u{430}yp\u{430}l"),
            ("bob", "b0b"),
            ("bob", "BOB"),
            ("Ivan", "lvan"),
            ("house", "h\u{43E}use"),
            ("rnoon", "moon"),
            ("Zo\u{EB}", "Zoe\u{308}"),
        ];
        for (a, b) in same {
            assert_eq!(look_alike_key(a), look_alike_key(b), "{a:?} {b:?}");
        }
        for (a, b) in [("ann", "bob"), ("t1", "t2"), ("ann", "anna"), ("p10", "p11")] {
            assert_ne!(look_alike_key(a), look_alike_key(b), "{a:?} {b:?}");
        }
    }

    #[test]
    fn free_text_loses_its_controls_and_keeps_the_rest() {
        assert_eq!(clean("only 3x3 today").as_deref(), Some("only 3x3 today"));
        assert_eq!(clean("\u{1B}[2J\u{1B}]0;pwned\u{7}clear").as_deref(), Some("[2J]0;pwnedclear"));
        assert_eq!(clean("a\r\nb\tc").as_deref(), Some("a  b c"));
        assert_eq!(clean("x\u{9B}31m\u{7F}y").as_deref(), Some("x31my"));
        assert_eq!(clean("\u{202E}won I").as_deref(), Some("won I"));
        assert_eq!(clean("👩\u{200D}💻 later").as_deref(), Some("👩\u{200D}💻 later"));
        assert_eq!(clean(" \u{0}\u{1B} \n"), None);
        assert_eq!(clean(""), None);
    }
}
