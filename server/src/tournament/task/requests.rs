//! The tournament task's answers to a connection's requests: each one
//! checked here, its store calls run in tasks of their own (`Task::call`),
//! and their answers back as [`Done`].

use std::sync::Arc;

use tictactoe_protocol::{ErrorCode, RequestId, ServerMessage, tournament::TournamentStatus};

use super::{Done, Task, now_ms};
use crate::cmd::{ConnHandle, encode};
use crate::core::account::Identity;
use crate::core::presence::Presence;
use crate::store::record::{is_game_id, new_game_id};
use crate::store::tournaments::{TournamentData, TournamentRow, TournamentWrite};
use crate::store::{Store, StoreError};
use crate::tournament::TournamentAsk;

fn error(code: ErrorCode, text: impl Into<String>, id: Option<RequestId>) -> ServerMessage {
    ServerMessage::error(code, text, id)
}

/// The refusal for a store that cannot answer.
fn unavailable(e: StoreError, id: Option<RequestId>) -> ServerMessage {
    let mut msg = error(ErrorCode::Unavailable, e.to_string(), id);
    if let ServerMessage::Error { retry_after_ms, .. } = &mut msg {
        *retry_after_ms = Some(2_000);
    }
    msg
}

fn not_found(tournament: &str, id: Option<RequestId>) -> ServerMessage {
    let shown: String = tournament.chars().take(40).collect();
    error(
        ErrorCode::TournamentNotFound,
        format!("no tournament has the id {shown:?}; `tournaments` lists them"),
        id,
    )
}

impl Task {
    pub(super) fn ask(
        &mut self,
        conn: ConnHandle,
        who: Arc<Identity>,
        presence: Option<Arc<Presence>>,
        ask: TournamentAsk,
        id: Option<RequestId>,
    ) {
        let store = self.ctx.store.clone();
        match ask {
            TournamentAsk::Create { terms, starts_in_ms } => {
                let now = now_ms();
                let row = TournamentRow {
                    id: new_game_id(&mut self.rng, now),
                    terms,
                    created_by: who.name.clone(),
                    starts_at: now.saturating_add(i64::try_from(starts_in_ms).unwrap_or(0)),
                };
                self.call(async move {
                    let msg = match store.tournament_write(TournamentWrite::Create(row.clone())).await {
                        Ok(()) => {
                            ServerMessage::Tournament { tournament: Box::new(row.summary(0, now_ms())) }
                        }
                        Err(e) => unavailable(e, id),
                    };
                    Some(Done::Reply(conn, msg))
                });
            }
            TournamentAsk::List => self.call(async move {
                let msg = match store.tournaments(now_ms()).await {
                    Ok(tournaments) => ServerMessage::Tournaments { tournaments, id },
                    // A server without records has no tournaments.
                    Err(StoreError::Disabled) => ServerMessage::Tournaments { tournaments: Vec::new(), id },
                    Err(e) => unavailable(e, id),
                };
                Some(Done::Reply(conn, msg))
            }),
            TournamentAsk::Join(tid) | TournamentAsk::Leave(tid) | TournamentAsk::Watch(tid)
                if !is_game_id(&tid) =>
            {
                conn.frame(&encode(&not_found(&tid, id)));
            }
            TournamentAsk::Join(tid) => {
                let (Some(account), Some(presence)) = (who.account, presence) else {
                    conn.frame(&encode(&error(ErrorCode::AccountRequired, SIGN_IN, id)));
                    return;
                };
                if let Some(m) = self.members.get(&conn.id).filter(|m| *m.tournament != *tid) {
                    let text = format!(
                        "you are in tournament {} already: tournament_leave it first (a connection plays one at a time)",
                        m.tournament
                    );
                    conn.frame(&encode(&error(ErrorCode::Busy, text, id)));
                    return;
                }
                self.call(async move {
                    let data = match store.tournament(&tid).await {
                        Ok(Some(data)) => data,
                        Ok(None) => return Some(Done::Reply(conn, not_found(&tid, id))),
                        Err(e) => return Some(Done::Reply(conn, unavailable(e, id))),
                    };
                    if data.row.status(now_ms()) == TournamentStatus::Finished {
                        let text =
                            format!("tournament {tid} has finished; `tournaments` lists those running");
                        return Some(Done::Reply(conn, error(ErrorCode::TournamentFinished, text, id)));
                    }
                    let (name, tournament) = (who.name.clone(), data.row.id.clone());
                    let write = TournamentWrite::Join { tournament, account, name };
                    Some(match written(&store, write, &tid).await {
                        Ok(data) => Done::Joined { conn, who, presence, data, active: true },
                        Err(msg) => Done::Reply(conn, with_id(msg, id)),
                    })
                });
            }
            TournamentAsk::Leave(tid) => {
                let Some(m) = self.members.get(&conn.id).filter(|m| *m.tournament == *tid) else {
                    let text = format!("you have not joined tournament {tid} on this connection");
                    conn.frame(&encode(&error(ErrorCode::TournamentNotFound, text, id)));
                    return;
                };
                let (Some(account), presence) = (who.account, m.presence.clone()) else { return };
                let tournament = m.tournament.clone();
                self.call(async move {
                    Some(match written(&store, TournamentWrite::Pause { tournament, account }, &tid).await {
                        Ok(data) => Done::Joined { conn, who, presence, data, active: false },
                        Err(msg) => Done::Reply(conn, with_id(msg, id)),
                    })
                });
            }
            TournamentAsk::Watch(tid) => self.call(async move {
                Some(match store.tournament(&tid).await {
                    Ok(Some(data)) => Done::Watched { conn, data },
                    Ok(None) => Done::Reply(conn, not_found(&tid, id)),
                    Err(e) => Done::Reply(conn, unavailable(e, id)),
                })
            }),
        }
    }
}

/// What a guest asking to play in or create a tournament is told.
const SIGN_IN: &str = "tournaments are for accounts: register, then hello with your token";

/// Writes a join or pause, then reads the tournament as it is now.
async fn written(store: &Store, write: TournamentWrite, tid: &str) -> Result<TournamentData, ServerMessage> {
    store.tournament_write(write).await.map_err(|e| unavailable(e, None))?;
    match store.tournament(tid).await {
        Ok(Some(data)) => Ok(data),
        Ok(None) => Err(not_found(tid, None)),
        Err(e) => Err(unavailable(e, None)),
    }
}

/// The refusal `msg` with the request's id.
fn with_id(mut msg: ServerMessage, req: Option<RequestId>) -> ServerMessage {
    if let ServerMessage::Error { id, .. } = &mut msg {
        *id = req;
    }
    msg
}
