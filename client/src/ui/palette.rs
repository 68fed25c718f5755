//! What each colour means, the same in the terminal and on the web page:
//! X is blue, O magenta, "your turn" green and warnings (low time, a lost
//! connection) red. The web page's `style.css` defines the same meanings as
//! `--x`, `--o`, `--turn` and `--warn` (checked by a test below).

use crossterm::style::{Color, Stylize};
use tictactoe_protocol::Player;

/// What a piece of text is, for its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// No colour.
    Plain,
    /// X's mark, or X's player.
    X,
    /// O's mark, or O's player.
    O,
    /// It is your turn.
    Turn,
    /// Something needs attention: little time left, the connection down.
    Warn,
}

impl Tone {
    /// The tone of `player`'s mark.
    pub fn of(player: Player) -> Tone {
        match player {
            Player::X => Tone::X,
            Player::O => Tone::O,
        }
    }

    /// The terminal colour of this tone, if it has one.
    pub fn colour(self) -> Option<Color> {
        match self {
            Tone::Plain => None,
            Tone::X => Some(Color::Blue),
            Tone::O => Some(Color::Magenta),
            Tone::Turn => Some(Color::Green),
            Tone::Warn => Some(Color::Red),
        }
    }

    /// `text` in this tone's colour (bold), or as it is for [`Tone::Plain`].
    pub fn paint(self, text: &str) -> String {
        match self.colour() {
            Some(c) => text.with(c).bold().to_string(),
            None => text.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The web page's colours for each tone, light scheme then dark.
    const WEB: [(&str, Tone, [&str; 2]); 4] = [
        ("--x", Tone::X, ["#1565c0", "#64b5f6"]),
        ("--o", Tone::O, ["#9c27b0", "#ce93d8"]),
        ("--turn", Tone::Turn, ["#2e7d32", "#81c784"]),
        ("--warn", Tone::Warn, ["#c62828", "#ef9a9a"]),
    ];

    #[test]
    fn the_web_page_gives_each_tone_the_same_colour_family() {
        let css = include_str!("../../../web/style.css");
        for (var, tone, [light, dark]) in WEB {
            let family = match tone.colour() {
                Some(Color::Blue) => "blue",
                Some(Color::Magenta) => "magenta",
                Some(Color::Green) => "green",
                Some(Color::Red) => "red",
                other => panic!("{var}: no colour family for {other:?}"),
            };
            for hex in [light, dark] {
                assert!(css.contains(&format!("{var}: {hex};")), "style.css sets {var}: {hex} ({family})");
                assert_eq!(hue_family(hex), family, "{var} {hex}");
            }
        }
    }

    /// The colour family of `#rrggbb` by its largest channels.
    fn hue_family(hex: &str) -> &'static str {
        let ch = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex");
        let (r, g, b) = (i32::from(ch(1)), i32::from(ch(3)), i32::from(ch(5)));
        if b > r && b > g && r < g + 40 {
            "blue"
        } else if r > g + 40 && b > g + 40 {
            "magenta"
        } else if g > r && g > b {
            "green"
        } else if r > g && r > b {
            "red"
        } else {
            "other"
        }
    }
}
