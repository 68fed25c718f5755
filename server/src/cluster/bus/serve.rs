//! One connection's life of the bus: three parts that never wait for each
//! other's round trips to Redis. The publisher (its own task and
//! connection) sends relayed messages; the worker (see `worker`) does the
//! rest of what is asked of Redis; the control loop here runs the router:
//! it reads the subscription and delivers what other instances say at
//! once, takes the lobby's asks, and hands the worker what needs Redis.
//! When any part fails, all end together, and `start` connects again.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use redis::AsyncConnectionConfig;
use tokio::sync::mpsc;
use tracing::warn;

use super::worker::{Job, Worker};
use super::{ANSWER, BACK, BusState, Kept, PING, RELEASED, WHO_LASTS, calls::carry, channel, publish};
use crate::cluster::matchmaker::PASS;
use crate::cluster::relay::Envelope;
use crate::cluster::route::{Input, Output, WHO};
use crate::cmd::LobbyCmd;

/// One connection's life: subscribed, checked every [`PING`], until it
/// fails (returns why).
pub(super) async fn serve(
    client: &redis::Client,
    state: &BusState,
    kept: &mut Kept,
    released: &(impl Fn(&str) + Sync),
) -> Result<Infallible, String> {
    let config = AsyncConnectionConfig::new().set_connection_timeout(ANSWER).set_response_timeout(ANSWER);
    let connect = || client.get_multiplexed_async_connection_with_config(&config);
    let mut conn = connect().await.map_err(|e| e.to_string())?;
    // The publisher's own: a relayed move never waits behind a lookup.
    let publishing = connect().await.map_err(|e| e.to_string())?;
    let mut pubsub = match tokio::time::timeout(ANSWER, client.get_async_pubsub()).await {
        Ok(p) => p.map_err(|e| e.to_string())?,
        Err(_) => return Err("no answer".into()),
    };
    let Kept {
        presence,
        router,
        from_lobby,
        lobby,
        outgoing,
        run,
        tournament_free,
        matchmaker,
        to_worker,
        jobs,
        to_router,
        answers,
        pending,
    } = kept;
    let mine = channel(&presence.instance);
    match tokio::time::timeout(ANSWER, pubsub.subscribe(&[RELEASED, BACK, mine.as_str()])).await {
        Ok(r) => r.map_err(|e| e.to_string())?,
        Err(_) => return Err("no answer".into()),
    }
    let me: Arc<str> = presence.instance.as_str().into();
    // What was written or lost while the bus was away.
    let outputs = router.handle(Input::Resync, Instant::now());
    carry(router, lobby, outputs, Some(&mut conn)).await.map_err(|e| e.to_string())?;
    // Listed before it says it is back: the others look it up at once.
    let listed = format!("{WHO}:{}", presence.instance);
    redis::pipe()
        .cmd("SET")
        .arg(&listed)
        .arg("[]")
        .arg("PX")
        .arg(WHO_LASTS.as_millis() as u64)
        .arg("NX")
        .ignore()
        .cmd("SADD")
        .arg(WHO)
        .arg(&*me)
        .ignore()
        .query_async::<()>(&mut conn)
        .await
        .map_err(|e| e.to_string())?;
    let _: i64 =
        redis::cmd("PUBLISH").arg(BACK).arg(&*me).query_async(&mut conn).await.map_err(|e| e.to_string())?;
    // Started after `BACK`: the others know this run before its messages.
    let mut publisher = publish::start(me.clone(), *run, publishing, outgoing.clone());
    let worker = Worker {
        me: me.clone(),
        conn,
        state,
        presence,
        matchmaker,
        jobs,
        answers: to_router.clone(),
        pending,
        outbox: router.outbox(),
        tournament_free: tournament_free.clone(),
    };
    let control = async {
        let mut messages = pubsub.on_message();
        let mut every = tokio::time::interval(PING);
        let mut pass = tokio::time::interval(PASS);
        pass.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut told_waiting = false;
        loop {
            let outputs = tokio::select! {
                _ = every.tick() => {
                    let (ghosts, relayed) = router.counts();
                    ::metrics::gauge!("ttt_relay_ghosts").set(ghosts as f64);
                    ::metrics::gauge!("ttt_relay_connections").set(relayed as f64);
                    told_waiting = false;
                    router.handle(Input::Sweep, Instant::now())
                }
                _ = pass.tick() => {
                    // Who waits here, written when it changes and every second.
                    if !told_waiting || !router.waiting.is_empty() {
                        let _ = to_worker.send(Job::Waiting(router.waiting.clone()));
                        told_waiting = true;
                    }
                    router.handle(Input::Retry, Instant::now())
                }
                msg = messages.next() => {
                    let Some(msg) = msg else {
                        return Err::<Infallible, String>("the subscription ended".into());
                    };
                    let input = match msg.get_channel_name() {
                        BACK => match msg.get_payload::<String>() {
                            Ok(name) if *name != *me => Input::Returned(name),
                            _ => continue,
                        },
                        RELEASED => match msg.get_payload::<String>() {
                            Ok(name) => {
                                released(&name);
                                Input::Stopped(name)
                            }
                            Err(_) => continue,
                        },
                        _ => {
                            ::metrics::counter!("ttt_relay_messages_total", "way" => "in").increment(1);
                            match serde_json::from_slice::<Envelope>(msg.get_payload_bytes()) {
                                Ok(env) => {
                                    ::metrics::counter!("ttt_relay_items_total", "way" => "in").increment(env.items() as u64);
                                    Input::Incoming(env)
                                }
                                Err(e) => {
                                    warn!("a message on the bus could not be read: {e}");
                                    continue;
                                }
                            }
                        }
                    };
                    router.handle(input, Instant::now())
                }
                Some(ask) = from_lobby.recv() => {
                    let mut outputs = router.handle(Input::Lobby(ask), Instant::now());
                    while let Ok(ask) = from_lobby.try_recv() {
                        outputs.extend(router.handle(Input::Lobby(ask), Instant::now()));
                    }
                    outputs
                }
                // Redis's answers, from the worker.
                Some(input) = answers.recv() => router.handle(input, Instant::now()),
            };
            hand(outputs, lobby, to_worker).await;
        }
    };
    tokio::select! {
        ended = worker.run() => ended,
        ended = control => ended,
        ended = &mut publisher.0 => match ended {
            Ok(ended) => ended,
            Err(e) => Err(format!("the publisher ended: {e}")),
        },
    }
}

/// Hands the lobby what the router says for it, and the worker what needs
/// Redis: nothing here waits for Redis.
async fn hand(outputs: Vec<Output>, lobby: &mpsc::Sender<LobbyCmd>, worker: &mpsc::UnboundedSender<Job>) {
    let mut asks = Vec::new();
    for output in outputs {
        match output {
            Output::Lobby(cmd) => {
                let _ = lobby.send(cmd).await;
            }
            output => asks.push(output),
        }
    }
    if !asks.is_empty() {
        let _ = worker.send(Job::Redis(asks));
    }
}
