#!/usr/bin/env python3
"""A Gomocup brain (Piskvork protocol) for the bridge's tests, misbehaving on cue.

usage: scripted.py MODE STATE_DIR [DELAY_MS]

Each start of the process is a "life", numbered by the files it leaves in
STATE_DIR (life-N.log holds every line it was sent). It plays the empty cell
nearest the centre, after DELAY_MS. In its first life, at its second move,
MODE decides what it does instead:
  crash    exits        error    answers ERROR     illegal  plays a taken cell
  garbage  answers junk silent   never answers     ok       plays on
and `refuse` answers every START with ERROR.
"""
import os
import sys
import time

mode, state = sys.argv[1], sys.argv[2]
delay = int(sys.argv[3]) / 1000 if len(sys.argv) > 3 else 0
life = len([f for f in os.listdir(state) if f.startswith("life-")]) + 1
log = open(os.path.join(state, f"life-{life}.log"), "w", buffering=1)
size, stones, asked = 0, {}, 0


def say(line):
    print(line, flush=True)


def move():
    global asked
    asked += 1
    if life == 1 and asked == 2:
        if mode == "crash":
            sys.exit(3)
        if mode == "error":
            return say("ERROR cannot think")
        if mode == "illegal":
            x, y = next(iter(stones))
            return say(f"{x},{y}")
        if mode == "garbage":
            return say("hello there")
        if mode == "silent":
            time.sleep(600)
    time.sleep(delay)
    say("MESSAGE thinking")
    c = size // 2
    free = [(x, y) for x in range(size) for y in range(size) if (x, y) not in stones]
    x, y = min(free, key=lambda p: (abs(p[0] - c) + abs(p[1] - c), p))
    stones[(x, y)] = 1
    say(f"{x},{y}")


for raw in sys.stdin:
    line = raw.strip()
    log.write(line + "\n")
    word = line.split(" ")[0].upper()
    if word == "ABOUT":
        say(f'name="scripted {mode}", version="1", author="tests"')
    elif word == "START":
        if mode == "refuse":
            say("ERROR this brain plays no board today")
            continue
        size, stones = int(line.split()[1]), {}
        say("OK")
    elif word == "RESTART":
        stones = {}
        say("OK")
    elif word == "BEGIN":
        move()
    elif word == "TURN":
        x, y = map(int, line.split()[1].split(","))
        stones[(x, y)] = 2
        move()
    elif word == "BOARD":
        stones = {}
        for raw in sys.stdin:
            line = raw.strip()
            log.write(line + "\n")
            if line.upper() == "DONE":
                break
            x, y, who = map(int, line.split(","))
            stones[(x, y)] = who
        move()
    elif word == "END":
        break
