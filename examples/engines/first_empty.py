#!/usr/bin/env python3
"""The smallest engine for `ttt bot --engine`: plays the first empty cell.

The bridge writes `position SIZE MARK BOARD` (BOARD = rows of X, O and .
joined by /) and reads back one line `ROW COL`. `error REASON` follows an
answer it could not use; `quit` ends the session. See PROTOCOL.md.
"""
import sys

for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "quit":
        break
    if words[0] == "position":
        size, rows = int(words[1]), words[3].split("/")
        cell = next((r, c) for r in range(size) for c in range(size) if rows[r][c] == ".")
        print(f"{cell[0]} {cell[1]}", flush=True)
    # `error ...` lines need no answer: the position comes again.
