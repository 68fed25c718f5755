//! The lobby's task: reads the lobby's inbox until shutdown, wakes the lobby
//! when a challenge expires or a waiting player is due to play the house, and
//! starts a task for every room the lobby opens.

use tokio::sync::mpsc;
use tokio_util::task::TaskTracker;

use super::Lobby;
use crate::cmd::LobbyCmd;
use crate::room::task::{self, RoomContext};
use crate::room::{Room, Settings};

/// Runs the lobby until shutdown, starting with the `restored` rooms.
pub async fn run(
    mut inbox: mpsc::Receiver<LobbyCmd>,
    settings: Settings,
    restored: Vec<Room>,
    challenge_lifetime: std::time::Duration,
    ctx: RoomContext,
    tracker: TaskTracker,
) {
    let shutdown = ctx.shutdown.clone();
    let mut lobby = Lobby::new(settings, challenge_lifetime);
    for room in restored {
        let new = lobby.adopt(room);
        task::spawn(new.room, new.members, new.inbox, ctx.clone(), &tracker);
    }
    let timer = tokio::time::sleep(std::time::Duration::ZERO);
    tokio::pin!(timer);
    let mut armed = None;
    loop {
        // Re-armed only when the next expiry changes, not per command.
        let deadline = lobby.next_deadline();
        if deadline != armed {
            if let Some(d) = deadline {
                timer.as_mut().reset(tokio::time::Instant::from_std(d));
            }
            armed = deadline;
        }
        let cmd = tokio::select! {
            _ = shutdown.started() => return,
            cmd = inbox.recv() => match cmd {
                Some(cmd) => cmd,
                None => return,
            },
            _ = &mut timer, if deadline.is_some() => {
                for new in lobby.tick(std::time::Instant::now()) {
                    task::spawn(new.room, new.members, new.inbox, ctx.clone(), &tracker);
                }
                continue;
            }
        };
        if let Some(new) = lobby.handle(cmd, std::time::Instant::now()) {
            task::spawn(new.room, new.members, new.inbox, ctx.clone(), &tracker);
        }
    }
}
