//! The lobby's task: reads the lobby's inbox until shutdown and starts a task
//! for every room the lobby opens.

use tokio::sync::mpsc;
use tokio_util::task::TaskTracker;

use super::Lobby;
use crate::cmd::LobbyCmd;
use crate::room::{Room, Settings};
use crate::room_task::{self, RoomContext};

/// Runs the lobby until shutdown, starting with the `restored` rooms.
pub async fn run(
    mut inbox: mpsc::Receiver<LobbyCmd>,
    settings: Settings,
    restored: Vec<Room>,
    ctx: RoomContext,
    tracker: TaskTracker,
) {
    let shutdown = ctx.shutdown.clone();
    let mut lobby = Lobby::new(settings);
    for room in restored {
        let new = lobby.adopt(room);
        room_task::spawn(new.room, new.members, new.inbox, ctx.clone(), &tracker);
    }
    loop {
        let cmd = tokio::select! {
            _ = shutdown.started() => return,
            cmd = inbox.recv() => match cmd {
                Some(cmd) => cmd,
                None => return,
            },
        };
        if let Some(new) = lobby.handle(cmd, std::time::Instant::now()) {
            room_task::spawn(new.room, new.members, new.inbox, ctx.clone(), &tracker);
        }
    }
}
