#!/usr/bin/env python3
"""A complete tictactoe bot in one file: connect, get a game, play it, exit.

    pip install websockets
    python3 bot.py --server ws://127.0.0.1:7878            # quick match, 3x3
    python3 bot.py --join K7QM3XPA2B                        # a friend's room
    python3 bot.py --games 10                               # rematch, or find someone new
    python3 bot.py --accept-challenges --sizes 3,4          # wait to be challenged by name
    python3 bot.py --clock 3+2                              # quick match on a Fischer clock (or TTT_CLOCK=3+2)

It plays as a bot account: the first run registers its name (`register`,
`bot: true`) and keeps the token in ~/.config/ttt/bots/NAME.token (or under
$TTT_CONFIG_DIR), readable only by you; later runs sign in with it (`hello`
with `token`), so its games are rated. `TTT_TOKEN` overrides the file;
`--guest` plays without an account, and so does a server that keeps none.

After each game it asks for a rematch; when the room closes (`room_closed`)
or the rematch goes unanswered, a quick-match bot queues again and a bot in a
private room stops. If the connection drops mid-game, or the server restarts
(close code 1012), it reconnects with a jittered backoff and resumes its seat
while the grace period lasts; waiting in the queue, it queues again.

Started by a match runner (`ttt arena bot:python3 bot.py …`) with TTT_SERVER,
TTT_JOIN (a room code) and TTT_NAME in its environment, it joins that room as
a guest under that name, plays every game (rematch after each) and exits 0
when the room closes. A game from an opening starts with moves on the board:
`game_started` lists them in `moves`.

With --accept-challenges it queues for nothing: it waits until someone
challenges it by name (`challenged`), accepts boards of the --sizes it plays
and declines the rest with a reason, agrees to every rematch, and after each
game waits for the next challenge.

With --clock MINUTES+SECONDS (Lichess's way of writing a time control: 3+2
is three minutes each and two seconds added per move) it asks quick match for
a game on that Fischer clock. On a clock it spends its time as engines do: a
budget per move of a twentieth of the time left plus three quarters of the
increment, never more than half of the time left nor the time left less a
safety margin, read from the `clocks` and `running` the server sends with
every move (the house bot and `ttt bot` spend theirs the same way).

The protocol is in PROTOCOL.md at the repository root. This bot wins when it
can, blocks when it must, and otherwise takes the free cell closest to the centre.
"""
import argparse
import asyncio
import json
import os
import random
import sys
import time

import websockets


def lines(n, win):
    """Every run of `win` cells in a row, column or diagonal, as lists of (row, col)."""
    runs = []
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        for r in range(n):
            for c in range(n):
                end_r, end_c = r + dr * (win - 1), c + dc * (win - 1)
                if 0 <= end_r < n and 0 <= end_c < n:
                    runs.append([(r + i * dr, c + i * dc) for i in range(win)])
    return runs


def token_file(name):
    base = os.environ.get("TTT_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".config", "ttt")
    return os.path.join(base, "bots", f"{name}.token")


async def sign_in(ws, args):
    """Sends the right `hello`: with the saved token, or after registering
    the name once; as a guest with --guest or on a server without accounts."""
    path = token_file(args.name)
    token = os.environ.get("TTT_TOKEN")
    if not token and os.path.exists(path):
        with open(path) as f:
            token = f.read().strip()
    if not token and not args.guest:
        await ws.send(json.dumps({"type": "register", "name": args.name, "bot": True}))
        while True:
            msg = json.loads(await ws.recv())
            if msg["type"] == "registered":
                token = msg["token"]
                os.makedirs(os.path.dirname(path), exist_ok=True)
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "w") as f:
                    f.write(token + "\n")
                print(f"registered the bot account {msg['name']}; token saved in {path}")
                break
            if msg["type"] == "error" and msg["code"] == "auth_failed":
                break  # this server keeps no accounts: play as a guest
            if msg["type"] == "error":
                raise SystemExit(f"error: {msg['code']}: {msg['message']}")
    hello = {"type": "hello", "name": args.name}
    if token:
        hello["token"] = token
    await ws.send(json.dumps(hello))


def parse_clock(text):
    """`minutes+seconds` (3+2, 0.5+0, 10+0.1) as the wire's Fischer clock."""
    try:
        minutes, seconds = text.split("+")
        return {"initial_ms": round(float(minutes) * 60000), "increment_ms": round(float(seconds) * 1000)}
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a time control: write minutes+seconds, as in 3+2")


# Seconds kept back from the time left for the move's trip to the server.
SAFETY = 0.5


def budget(msg, control):
    """Seconds the move asked for by `msg` (game_started, state, moved) may
    take. On a Fischer clock (`control`, from game_started or state): a
    twentieth of our time left plus 3/4 of the increment, at most half of
    what is left past 250 ms, and at most the time left less SAFETY. No
    clock runs during each side's first move (`running` is null): that
    move's own time (`clock_ms`; 30 s for X's first) bounds it. Without a
    clock, a second (the per-move timer gives far more)."""
    clocks = msg.get("clocks")
    if not control or not clocks:
        return 1.0
    mover = msg.get("next") or msg.get("turn")
    left = clocks[mover - 1] / 1000
    first_move = msg.get("clock_ms") or 30000
    limit = (left if msg.get("running") else first_move / 1000) - SAFETY
    return max(0.0, min(left / 20 + control["increment_ms"] / 1000 * 3 / 4, (left - 0.25) / 2, limit))


def choose(board, me, avoid, win, deadline):
    """Pick a cell: win now, else block, else the free cell nearest the centre.
    Past `deadline` (time.monotonic()) it stops looking and takes the centre."""
    n = len(board)
    free = [(r, c) for r in range(n) for c in range(n) if board[r][c] is None and (r, c) not in avoid]
    them = 3 - me
    for who in (me, them):  # first try to win, then to block
        if time.monotonic() > deadline:
            break
        for line in lines(n, win):
            marks = [board[r][c] for r, c in line]
            empty = [cell for cell in line if board[cell[0]][cell[1]] is None and cell in free]
            if marks.count(who) == win - 1 and len(empty) == 1:
                return empty[0]
    centre = (n - 1) / 2
    return min(free, key=lambda rc: abs(rc[0] - centre) + abs(rc[1] - centre))


# A restarting server (close code 1012) is given this long to come back.
RESTART_WAIT = 60.0


def restarting(closed):
    """Whether a closed connection was the server saying it restarts (1012)."""
    frame = getattr(closed, "rcvd", None)
    return frame is not None and frame.code == 1012


async def play(args):
    """Connects, and connects again while a game is on and the grace lasts."""
    # What outlives a connection: the seat's resume token while a game is on,
    # the board, and the games played.
    s = {"token": None, "queued": False, "board": None, "me": None, "win": None, "played": 0, "grace": 60.0,
         "clock": None}
    clock = asyncio.get_running_loop().time
    give_up_at, backoff = None, 0.1
    while True:
        try:
            async with websockets.connect(args.server) as ws:
                result = await session(ws, args, s)
        except websockets.ConnectionClosed as e:
            result = ("lost", restarting(e))  # closed while sending
        except (OSError, websockets.InvalidHandshake, asyncio.TimeoutError):
            result = ("lost", False)  # could not (re)connect
        if isinstance(result, int):
            return result
        _, restart = result
        if s["token"] is None and not s["queued"] and not args.accept_challenges:
            print("error: the server closed the connection", file=sys.stderr)
            return 1
        if s.pop("resumed", False):
            give_up_at, backoff = None, 0.1  # the last drop was repaired: this is a new one
        if give_up_at is None:
            give_up_at = clock() + (max(s["grace"], RESTART_WAIT) if restart else s["grace"])
            print("server restarting, reconnecting…" if restart else "connection lost, reconnecting…", flush=True)
        if clock() >= give_up_at:
            print("error: could not reconnect within the grace period", file=sys.stderr)
            return 1
        await asyncio.sleep(backoff * (0.5 + random.random() / 2))
        backoff = min(backoff * 2, 2.0)


async def session(ws, args, s):
    """One connection: returns an exit code, or ("lost", restart) when it
    drops (restart: the server closed with 1012)."""
    last = None  # the last request, sent again if it was rate-limited

    async def send(msg):
        nonlocal last
        last = msg
        if msg["type"] == "quick_match":
            s["queued"] = True  # until game_started: a restart keeps no queue, so queue again
        await ws.send(json.dumps(msg))

    welcome = json.loads(await ws.recv())  # always the first message
    assert welcome["type"] == "welcome", welcome
    # An unanswered rematch is given up after a turn's time (30 s untimed).
    rematch_wait = (welcome["limits"]["turn_timeout_ms"] or 30000) / 1000
    s["grace"] = welcome["limits"].get("reconnect_grace_ms", 60000) / 1000
    new_game = {"type": "quick_match", "size": args.size}
    if args.win:
        new_game["win"] = args.win
    if args.clock:
        new_game["clock"] = args.clock  # quick match pairs only the same clock
    await sign_in(ws, args)
    if s["token"]:
        await send({"type": "resume", "token": s["token"]})  # back after a drop
    elif s["queued"]:
        await send(new_game)
        s["resumed"] = True  # back in the queue
    elif args.accept_challenges:
        print(f"{args.name} is waiting for challenges", flush=True)
    else:
        await send({"type": "join_room", "room": args.join} if args.join else new_game)

    avoid = set()
    rematch_until = None
    clock = asyncio.get_running_loop().time

    async def move(msg=None):
        # The budget counts from when the message asking for the move arrived.
        if msg is not None:
            s["deadline"] = time.monotonic() + budget(msg, s["clock"])
        row, col = choose(s["board"], s["me"], avoid, s["win"], s["deadline"])
        # The id comes back on our own `moved`, or on the `error` that refuses it.
        await send({"type": "move", "row": row, "col": col, "id": f"{row},{col}"})

    async def opponent_gone(why):
        """Quick match finds someone else; a private room ends the run."""
        if args.join:
            print(f"error: {why} after {s['played']} games", file=sys.stderr)
            return 1
        await send(new_game)
        return None

    while True:
        wait = None if rematch_until is None else max(0.0, rematch_until - clock())
        try:
            text = await asyncio.wait_for(ws.recv(), wait)
        except asyncio.TimeoutError:
            rematch_until = None
            await send({"type": "leave"})
            if (code := await opponent_gone("the rematch went unanswered")) is not None:
                return code
            continue
        except websockets.ConnectionClosed as e:
            return ("lost", restarting(e))
        msg = json.loads(text)
        kind = msg.get("type")
        if kind == "game_started":
            n = msg["size"]
            s["board"], s["me"], rematch_until = [[None] * n for _ in range(n)], msg["you"], None
            for i, (r, c) in enumerate(msg.get("moves") or []):  # an opening's moves, X first
                s["board"][r][c] = i % 2 + 1
            s["win"] = msg.get("win", n)  # marks in a row that win; n is the classic rule
            s["token"], s["queued"], s["clock"] = msg["resume_token"], False, msg.get("clock")
            tc = msg.get("clock")  # the game's time control, if any
            at = f" at {tc['initial_ms'] / 60000:g}+{tc['increment_ms'] / 1000:g}" if tc else ""
            print(f"playing {'XO'[s['me'] - 1]} in room {msg['room']}{at}", flush=True)
            if msg["turn"] == s["me"]:
                await move(msg)
        elif kind == "state":
            # Our seat back after a reconnect: the board as the server has it.
            n = msg["size"]
            s["board"] = [[None] * n for _ in range(n)]
            for i, (r, c) in enumerate(msg["moves"]):
                s["board"][r][c] = i % 2 + 1
            s["me"], s["win"], s["resumed"], s["clock"] = msg["you"], msg.get("win", n), True, msg.get("clock")
            print(f"back in room {msg['room']} after {len(msg['moves'])} moves", flush=True)
            if msg["turn"] == s["me"]:
                await move(msg)
        elif kind == "moved":
            s["board"][msg["row"]][msg["col"]] = msg["player"]
            avoid.clear()
            if msg["next"] == s["me"]:
                await move(msg)
        elif kind == "game_over":
            s["token"] = None
            winner = msg["winner"]
            outcome = "draw" if winner == 0 else ("win" if winner == s["me"] else "loss")
            print(f"result: {outcome} ({msg['reason']}) moves={json.dumps(msg['moves'])}", flush=True)
            s["played"] += 1
            if args.games and s["played"] >= args.games:
                await send({"type": "leave"})
                return 0
            if not args.accept_challenges:  # a challenged bot leaves rematches to its challenger
                await send({"type": "rematch"})
                # Playing until the room closes, its closing ends the wait.
                rematch_until = clock() + rematch_wait if args.games else None
        elif kind == "challenged":
            n, sizes = msg["size"], args.sizes
            playing = s["token"] is not None
            if playing or (sizes and n not in sizes):
                why = "in a game; try again after it" if playing else "this bot plays sizes " + ",".join(map(str, sizes))
                await send({"type": "decline", "challenge": msg["challenge"], "reason": why})
            else:
                print(f"{msg['from']['name']} challenges on {n}x{n}: accepted", flush=True)
                await send({"type": "accept", "challenge": msg["challenge"]})
        elif kind == "rematch_offered" and args.accept_challenges:
            await send({"type": "rematch"})
        elif kind == "room_closed":
            # The opponent left or dropped: no rematch is coming.
            rematch_until = None
            if args.accept_challenges:
                continue  # wait for the next challenge
            if not args.games:
                return 0  # every game of the room is played
            if (code := await opponent_gone("the opponent left the room")) is not None:
                return code
        elif kind == "error":
            code = msg["code"]
            if code in ("cell_occupied", "out_of_bounds") and msg.get("id"):
                avoid.add(tuple(int(x) for x in msg["id"].split(",")))  # try another cell
                await move()
            elif code == "invalid_token":
                # The game ended while we were away.
                s["token"] = None
                if (code := await opponent_gone("the game ended while the bot was reconnecting")) is not None:
                    return code
            elif code == "rate_limited":
                # Not acted on: wait as long as the server says, then send it again.
                await asyncio.sleep(msg.get("retry_after_ms", 1000) / 1000)
                if last is not None:
                    await send(last)
            elif code in ("not_your_turn", "not_in_game"):
                pass  # our move comes with the opponent's `moved`; a late rematch is moot
            else:  # room_not_found, room_full, invalid_*: nothing to retry
                print(f"error: {code}: {msg['message']}", file=sys.stderr)
                return 1
        # queued, room_created, pong, opponent_*, rematch_offered,
        # challenge_ended, and any type this bot does not know: nothing to do


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # A match runner starts the bot with these three: that room, that name, every game.
    arena = os.environ.get("TTT_JOIN") or None
    p.add_argument("--server", default=os.environ.get("TTT_SERVER", "ws://127.0.0.1:7878"))
    p.add_argument("--name", default=os.environ.get("TTT_NAME") or "python-bot")
    p.add_argument("--size", type=int, default=3)
    p.add_argument("--win", type=int, help="marks in a row that win (default: the size)")
    p.add_argument("--join", default=arena, help="room code to join instead of quick match (default: $TTT_JOIN)")
    p.add_argument("--games", type=int, default=0 if arena else 1,
                   help="games to play (rematch, or find a new opponent); 0: every game until the room closes")
    p.add_argument("--guest", action="store_true", default=bool(arena), help="play without an account")
    p.add_argument("--accept-challenges", action="store_true", help="wait to be challenged by name instead of queueing")
    p.add_argument("--sizes", type=lambda v: [int(x) for x in v.split(",")], default=[],
                   help="with --accept-challenges: board sizes to accept, e.g. 3,4 (default: any)")
    p.add_argument("--clock", type=parse_clock, default=os.environ.get("TTT_CLOCK") or None,
                   help="quick match on a Fischer clock, minutes+seconds, e.g. 3+2 (default: $TTT_CLOCK, else none)")
    sys.exit(asyncio.run(play(p.parse_args())))


if __name__ == "__main__":
    main()
