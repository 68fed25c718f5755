#!/usr/bin/env python3
"""A complete tictactoe bot in one file: connect, get a game, play it, exit.

    pip install websockets
    python3 bot.py --server ws://127.0.0.1:7878            # quick match, 3x3
    python3 bot.py --join K7QM3XPA2B                        # a friend's room

The protocol is in PROTOCOL.md at the repository root. This bot wins when it
can, blocks when it must, and otherwise takes the free cell closest to the centre.
"""
import argparse
import asyncio
import json
import os
import sys

import websockets


def lines(n):
    """Every winning line of an n x n board, as lists of (row, col)."""
    rows = [[(r, c) for c in range(n)] for r in range(n)]
    cols = [[(r, c) for r in range(n)] for c in range(n)]
    return rows + cols + [[(i, i) for i in range(n)], [(i, n - 1 - i) for i in range(n)]]


def choose(board, me, avoid):
    """Pick a cell: win now, else block, else the free cell nearest the centre."""
    n = len(board)
    free = [(r, c) for r in range(n) for c in range(n) if board[r][c] is None and (r, c) not in avoid]
    them = 3 - me
    for who in (me, them):  # first try to win, then to block
        for line in lines(n):
            marks = [board[r][c] for r, c in line]
            empty = [cell for cell in line if board[cell[0]][cell[1]] is None and cell in free]
            if marks.count(who) == n - 1 and len(empty) == 1:
                return empty[0]
    centre = (n - 1) / 2
    return min(free, key=lambda rc: abs(rc[0] - centre) + abs(rc[1] - centre))


async def play(args):
    async with websockets.connect(args.server) as ws:
        async def send(msg):
            await ws.send(json.dumps(msg))

        welcome = json.loads(await ws.recv())  # always the first message
        assert welcome["type"] == "welcome", welcome
        await send({"type": "hello", "name": args.name})
        if args.join:
            await send({"type": "join_room", "room": args.join})
        else:
            await send({"type": "quick_match", "size": args.size})

        board, me, avoid = None, None, set()

        async def move():
            row, col = choose(board, me, avoid)
            # The id comes back on our own `moved`, or on the `error` that refuses it.
            await send({"type": "move", "row": row, "col": col, "id": f"{row},{col}"})

        async for text in ws:
            msg = json.loads(text)
            kind = msg["type"]
            if kind == "game_started":
                n = msg["size"]
                board, me = [[None] * n for _ in range(n)], msg["you"]
                print(f"playing {'XO'[me - 1]} in room {msg['room']}", flush=True)
                if msg["turn"] == me:
                    await move()
            elif kind == "moved":
                board[msg["row"]][msg["col"]] = msg["player"]
                avoid.clear()
                if msg["next"] == me:
                    await move()
            elif kind == "game_over":
                winner = msg["winner"]
                outcome = "draw" if winner == 0 else ("win" if winner == me else "loss")
                print(f"result: {outcome} ({msg['reason']}) moves={json.dumps(msg['moves'])}", flush=True)
                await send({"type": "leave"})
                return 0
            elif kind == "error":
                code = msg["code"]
                if code in ("cell_occupied", "out_of_bounds") and msg.get("id"):
                    avoid.add(tuple(int(x) for x in msg["id"].split(",")))  # try another cell
                    await move()
                elif code == "rate_limited":
                    await asyncio.sleep(1)
                    await move()
                elif code == "not_your_turn":
                    pass  # our move will come with the opponent's `moved`
                else:  # room_not_found, room_full, invalid_*: nothing to retry
                    print(f"error: {code}: {msg['message']}", file=sys.stderr)
                    return 1
            # queued, room_created, pong, opponent_*, rematch_offered: nothing to do
    print("error: the server closed the connection", file=sys.stderr)
    return 1


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--server", default=os.environ.get("TTT_SERVER", "ws://127.0.0.1:7878"))
    p.add_argument("--name", default="python-bot")
    p.add_argument("--size", type=int, default=3)
    p.add_argument("--join", help="room code to join instead of quick match")
    sys.exit(asyncio.run(play(p.parse_args())))


if __name__ == "__main__":
    main()
