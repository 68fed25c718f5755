//! The command line: `ttt`'s subcommands and their flags, as clap reads them.

use clap::{Args, Parser, Subcommand};
use tictactoe_protocol::Fischer;

use crate::request::{RequestedRules, Start};
pub use crate::servers::ServerArg;
use crate::{arena, judge_cmd, say};

/// Play tic-tac-toe on a tictactoe server, watch a game, run a bot, play arena tournaments, or judge a move list.
#[derive(Parser)]
#[command(name = "ttt", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Which game to enter.
#[derive(Args)]
pub struct GameArgs {
    /// Board size for quick match or a new room [default: 3; 15 for a Gomocup brain].
    #[arg(long)]
    size: Option<usize>,
    /// Marks in a row that win (3 up to the size; default: the size, a whole line).
    #[arg(long)]
    win: Option<usize>,
    /// Open a private room and print its code.
    #[arg(long, conflicts_with = "join")]
    create: bool,
    /// Join the private room with this code.
    #[arg(long, value_name = "CODE", conflicts_with = "house")]
    join: Option<String>,
    /// Play the server's own bot at once.
    #[arg(long, conflicts_with = "create")]
    house: bool,
    /// With --house: how strong it plays.
    #[arg(long, default_value = "perfect", value_parser = ["random", "heuristic", "perfect"], requires = "house")]
    level: String,
    /// With --create: your mark in the first game (x moves first).
    #[arg(long, default_value = "random", value_parser = ["x", "o", "random"], requires = "create")]
    seat: String,
    /// A Fischer clock for a new game, minutes+seconds as Lichess writes it
    /// (3+2: three minutes each, two seconds added per move; 0.5+0, 10+0.1).
    /// Without it the game has the server's per-move timer. A room you join
    /// has its own.
    #[arg(long, value_name = "MIN+SEC", value_parser = clock_arg, conflicts_with = "join")]
    clock: Option<Fischer>,
}

/// `--clock`'s value read as a Fischer clock, refused in words otherwise.
fn clock_arg(text: &str) -> Result<Fischer, String> {
    text.parse()
}

impl GameArgs {
    /// Refuses, in words, a win length that does not fit the board.
    pub fn check(&self) -> Result<(), say::BadWin> {
        say::check_win(self.rules())
    }

    /// Five in a row, as a Gomocup brain plays: the win length when none
    /// is given (on 15×15 when no size is); another is refused in words.
    pub fn five_in_a_row(&mut self) -> Result<(), say::BadWin> {
        self.size.get_or_insert(15);
        match self.win {
            None | Some(5) => {
                self.win = Some(5);
                Ok(())
            }
            Some(win) => Err(say::BadWin::NotFive { win }),
        }
    }

    /// The rules (board, win length, clock) asked for.
    pub fn rules(&self) -> RequestedRules {
        RequestedRules { size: self.size.unwrap_or(3), win: self.win, clock: self.clock }
    }

    /// What the flags ask for: the house, a room to join or open, or quick match.
    pub fn start(&self) -> Start {
        if self.house {
            let level = tictactoe_protocol::HouseLevel::from_name(&self.level).unwrap_or_default();
            return Start::House(self.rules(), level);
        }
        match (&self.join, self.create) {
            (Some(code), _) => Start::Join(code.clone()),
            (None, true) => {
                let mark = match self.seat.as_str() {
                    "x" => Some(tictactoe_protocol::Player::X),
                    "o" => Some(tictactoe_protocol::Player::O),
                    _ => None,
                };
                Start::Create(self.rules(), mark)
            }
            (None, false) => Start::Quick(self.rules()),
        }
    }
}

/// The keys of `ttt play`, for its `--help`.
pub const PLAY_KEYS: &str = "Keys (full screen):
  arrows, Enter      move the cursor, play the cell under it
  b2 Enter, 2 2 Enter  play a cell by name (column letter, row number) or by row and column
  Ctrl-R             resign the game and stay in the room (asks first: y)
  Esc, q, Ctrl-C     leave; mid-game it asks first (y, or Ctrl-C again, resigns)
  r                  rematch, after a game (while the opponent is still in the room)
  n                  a new quick match on the same board, after a game
  a, d               accept or decline a challenge (shown while no game is in progress)
The status line shows whose turn it is, the clock (paused while a player is away),
ratings, and the connection (RECONNECTING, CONNECTION LOST). Your turn rings the
bell and sets the terminal title; under 5 s left the status line says LOW TIME.
With --clock (a Fischer clock, e.g. 3+2), a line above it shows both players'
time ticking (tenths under 10 s), the running clock highlighted and low time in
red (under 10 s, or under a tenth of the initial time when that is less); each
side's first move has its own 30 s, counted down on the status line.
Without a terminal (pipes), the same game runs as plain lines.
A game's seat is kept on disk while it lasts: after a crash or a kill, the same
command started again takes its own seat back (two clients on one machine, even
with the same name, each get their own). A room's invite gives the command and
the room's web page (http://HOST/r/CODE).";

#[derive(Subcommand)]
pub enum Command {
    /// Play a game: quick match by default, or a private room.
    #[command(after_help = PLAY_KEYS)]
    Play {
        #[command(flatten)]
        server: ServerArg,
        /// Your display name [default: your account saved for this server
        /// by `ttt register`, signed in with its token; else "player", a guest].
        #[arg(long)]
        name: Option<String>,
        #[command(flatten)]
        game: GameArgs,
    },
    /// Challenge an online player by name and play them if they accept.
    Challenge {
        #[command(flatten)]
        server: ServerArg,
        /// The player to challenge (`ttt who` lists who is online).
        player: String,
        /// Your display name [default: your account saved for this server
        /// by `ttt register`, signed in with its token; else "player", a guest].
        #[arg(long)]
        name: Option<String>,
        /// Board size.
        #[arg(long, default_value_t = 3)]
        size: usize,
        /// Marks in a row that win (default: the size).
        #[arg(long)]
        win: Option<usize>,
        /// A Fischer clock for the game, minutes+seconds (3+2); without it,
        /// the per-move timer.
        #[arg(long, value_name = "MIN+SEC", value_parser = clock_arg)]
        clock: Option<Fischer>,
    },
    /// List who is online, and whether they are idle, queued or playing.
    Who {
        #[command(flatten)]
        server: ServerArg,
    },
    /// Watch a room live.
    Watch {
        #[command(flatten)]
        server: ServerArg,
        /// The room code.
        room: String,
    },
    /// Play games as a bot and print wins, draws and losses. Started by a
    /// match runner with TTT_SERVER, TTT_JOIN (a room code) and TTT_NAME in
    /// its environment, it joins that room under that name and plays every
    /// game until the room closes.
    Bot {
        #[command(flatten)]
        server: ServerArg,
        /// Display name.
        #[arg(long, env = "TTT_NAME")]
        name: Option<String>,
        /// How it chooses moves.
        #[arg(long, default_value = "perfect", value_parser = ["perfect", "heuristic", "random"])]
        strategy: String,
        /// Let an external program choose the moves ("CMD ARGS", run with sh -c;
        /// see PROTOCOL.md, "Engine bridge"). Overrides --strategy.
        #[arg(long, value_name = "CMD")]
        engine: Option<String>,
        /// How --engine speaks: `line` (PROTOCOL.md, "Engine bridge") or
        /// `gomocup`, a Gomocup brain (`pbrain-…`, the Piskvork protocol;
        /// five in a row only, and its ABOUT name is the bot's name unless
        /// --name says otherwise; see PROTOCOL.md, "The Gomocup bridge").
        #[arg(long, default_value = "line", value_parser = ["line", "gomocup"], requires = "engine")]
        engine_protocol: String,
        /// A Gomocup brain's memory limit in MB (`INFO max_memory`).
        #[arg(long, value_name = "MB", default_value_t = crate::bot::gomocup::DEFAULT_MEMORY_MB)]
        engine_memory_mb: u64,
        /// How many games to play; 0: every game of the room until it closes.
        #[arg(long, default_value_t = 1)]
        games: u32,
        /// Time to think per move, in ms (the perfect strategy searches
        /// within it) [default: 1000; in a game with a Fischer clock, a
        /// budget from the time left and the increment, capped by this when given].
        #[arg(long, value_name = "MS")]
        think_ms: Option<u64>,
        /// Wait for challenges instead of queueing: a bot others invite by
        /// name (it accepts their rematches too).
        #[arg(long, conflicts_with_all = ["create", "join", "house", "challenge", "clock"])]
        accept_challenges: bool,
        /// Challenge this player by name (again after each game, unless a
        /// rematch is agreed) instead of queueing.
        #[arg(long, value_name = "NAME", conflicts_with_all = ["create", "join", "house"])]
        challenge: Option<String>,
        /// With --accept-challenges: the board sizes it accepts (e.g. 3,4);
        /// others are declined. Default: any.
        #[arg(long, value_delimiter = ',', requires = "accept_challenges")]
        sizes: Vec<usize>,
        /// Join this arena tournament and play every pairing until it ends
        /// (the bot's account signs in: TTT_TOKEN, or one saved under --name).
        #[arg(long, env = "TTT_TOURNAMENT", value_name = "ID",
              conflicts_with_all = ["create", "join", "house", "challenge", "accept_challenges", "clock"])]
        tournament: Option<String>,
        /// With --tournament: go berserk in every game, before its first move.
        #[arg(long, requires = "tournament")]
        berserk: bool,
        #[command(flatten)]
        game: GameArgs,
    },
    /// Arena tournaments: list, create, watch the standings, or join and play.
    Tournament(crate::tournament_cmd::args::TournamentArgs),
    /// Replay a move list and print A, B, Draw or Pending.
    Judge(judge_cmd::JudgeArgs),
    /// Measure one bot against another in game pairs, with Elo and an SPRT
    /// as fastchess prints them; `ttt arena stats` from counts alone.
    Arena(arena::args::ArenaArgs),
    /// Create an account on the server; its token is saved for `play` and `bot`.
    Register {
        #[command(flatten)]
        server: ServerArg,
        /// The account's name (unique on the server, ignoring case).
        name: String,
        /// A bot account (marked as one everywhere, for good).
        #[arg(long)]
        bot: bool,
    },
    /// A player's recent games, newest first (default: your saved account).
    History {
        #[command(flatten)]
        server: ServerArg,
        /// The player.
        name: Option<String>,
        /// How many games.
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Step through a recorded game on the board (Enter for each move), or
    /// play it back with --delay.
    Replay {
        #[command(flatten)]
        server: ServerArg,
        /// The game's id (from `game_over`, `ttt history` or the API).
        game_id: String,
        /// Play it back, one move every this many ms.
        #[arg(long, value_name = "MS")]
        delay: Option<u64>,
    },
    /// The leaderboard of one board's rating pool.
    Top {
        #[command(flatten)]
        server: ServerArg,
        /// Board size.
        #[arg(long, default_value_t = 3)]
        size: usize,
        /// Win length (default: the size).
        #[arg(long)]
        win: Option<usize>,
        /// How many players.
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// A player's ratings and results (default: your saved account).
    Profile {
        #[command(flatten)]
        server: ServerArg,
        /// The player.
        name: Option<String>,
    },
}
