"""Pure-Python twin of the C core's database levels (`bots/_search_level.h`): the two file formats, the probe,
and format v2's model, encoder and decoder.

v1 holds one signed byte per rank. v2 (see `bots.egdb` for the whole file) stores u = (v + k) >> shift of each
value v of level k as a 4-bit code relative to a prediction (the block's base plus the level's predictor for the
board's empty houses on each side), 122 codes to a 64-byte block, code 15 an escape to the block's exceptions.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from math import comb
from typing import Any

MAGIC = b"KALAHEGD"
VERSION = 2
HEADER = 512
CODES = 122
GROUP = 512
ESCAPE = 15
PREDICTOR_AT = 128
"""Offset of the predictor table, (h + 1) ** 2 bytes, in the header."""
FIELDS = struct.Struct("<8sIIBBBBIQQQQQ")
"""magic, version, header bytes, h, k, shift, codes per block, blocks per group, positions, blocks, groups,
exceptions, file bytes."""


def positions_of(houses: int, k: int) -> int:
    """Number of house contents of k seeds on 2*houses houses (one rank each)."""
    return comb(k + 2 * houses - 1, 2 * houses - 1)


def blocks_of(positions: int) -> int:
    """Blocks of a v2 level of that many positions."""
    return -(-positions // CODES)


def groups_of(blocks: int) -> int:
    """Group words of a v2 level of that many blocks."""
    return -(-blocks // GROUP)


def body_room(positions: int) -> int:
    """Bytes `encode_level` may write: blocks, group words and every position as an exception."""
    blocks = blocks_of(positions)
    return blocks * 64 + groups_of(blocks) * 8 + positions


def empties_index(h: int, board: Sequence[int]) -> int:
    """Empty houses of the mover times (h + 1) plus the opponent's: the predictor's index."""
    em = sum(1 for x in board[:h] if not x)
    eo = sum(1 for x in board[h + 1 : 2 * h + 1] if not x)
    return em * (h + 1) + eo


def compositions(m: int, k: int, start: int, stop: int) -> Any:
    """House contents of k seeds on m houses with ranks start..stop-1, in rank order."""
    bars: list[int] = []
    r, top = start, k + m - 2
    for j in range(m - 2, -1, -1):
        p = top
        while comb(p, j + 1) > r:
            p -= 1
        bars.append(p)
        r -= comb(p, j + 1)
        top = p - 1
    bars.reverse()
    for _ in range(start, stop):
        edges = [-1, *bars, k + m - 1]
        yield [edges[j + 1] - edges[j] - 1 for j in range(m)]
        j = 0
        while j < m - 2 and bars[j] + 1 == bars[j + 1]:
            j += 1
        if bars:
            bars[j] += 1
            bars[:j] = range(j)


def _walk(h: int, k: int, positions: int) -> Any:
    """The boards (stores zero) of ranks 0..positions-1 of a level, in rank order."""
    return ((*x[:h], 0, *x[h:], 0) for x in compositions(2 * h, k, 0, positions))


class Level:
    """A level's bytes (v1 or v2) read by rank and board, as the C core's probe reads them."""

    def __init__(self, data: Any, h: int, k: int) -> None:
        view = memoryview(data).cast("B")
        positions = positions_of(h, k)
        self.h, self.k = h, k
        self.raw: memoryview | None = None
        if len(view) >= HEADER and bytes(view[:8]) == MAGIC:
            f = FIELDS.unpack_from(view)
            blocks = blocks_of(positions)
            groups = groups_of(blocks)
            if (f[1:4] != (VERSION, HEADER, h) or f[4] != k or f[5] > 1 or f[6:8] != (CODES, GROUP)
                    or f[8:11] != (positions, blocks, groups) or f[12] != len(view) or f[11] > positions
                    or HEADER + blocks * 64 + groups * 8 + f[11] != len(view)):
                raise ValueError(f"level {k}: a format v2 header that does not match its size or level")
            self.shift = f[5]
            self.pred = bytes(view[PREDICTOR_AT : PREDICTOR_AT + (h + 1) ** 2])
            self.blocks = view[HEADER : HEADER + blocks * 64]
            at = HEADER + blocks * 64
            self.groups = view[at : at + groups * 8].cast("Q")
            self.exc = view[at + groups * 8 :]
        elif len(view) == positions:
            self.raw = view.cast("b")
        else:
            raise ValueError(f"database level {k} has {len(view)} bytes, expected {positions}")

    def value(self, r: int, board: Sequence[int]) -> int:
        """The value of rank r, the board's."""
        if self.raw is not None:
            return int(self.raw[r])
        blk, s = divmod(r, CODES)
        line = self.blocks[blk * 64 : blk * 64 + 64]
        c = (line[3 + (s >> 1)] >> ((s & 1) << 2)) & 15
        if c != ESCAPE:
            base = line[0] - 256 if line[0] > 127 else line[0]
            u = base + c + self.pred[empties_index(self.h, board)]
        else:
            at = self.groups[blk // GROUP] + (line[1] | line[2] << 8)
            at += sum(1 for i in range(s) if (line[3 + (i >> 1)] >> ((i & 1) << 2)) & 15 == ESCAPE)
            u = self.exc[at] if at < len(self.exc) else 0
        return int((u << self.shift) - self.k)


def level_model(houses: int, k: int, values: Any, /) -> tuple[int, bytes]:
    """A level's format v2 model from its values (one byte per rank): (shift, predictions by empty houses)."""
    view = memoryview(values).cast("B").cast("b")
    positions = positions_of(houses, k)
    if len(view) != positions:
        raise ValueError("the values do not have one byte per position of the level")
    if any(not -k <= v <= k for v in view):
        raise ValueError(f"a value out of -{k}..{k}")
    shift = 0 if any((v + k) & 1 for v in view) else 1
    n = (houses + 1) ** 2
    total, count = [0] * n, [0] * n
    for r, board in enumerate(_walk(houses, k, positions)):
        e = empties_index(houses, board)
        total[e] += (view[r] + k) >> shift
        count[e] += 1
    return shift, bytes((2 * t + c) // (2 * c) if c else 0 for t, c in zip(total, count, strict=True))


def encode_level(houses: int, k: int, values: Any, shift: int, pred: bytes, out: Any, /) -> int:
    """Encode a level's values to format v2 after its header (blocks, group words, exceptions) into `out`: the
    exceptions written."""
    view = memoryview(values).cast("B").cast("b")
    positions = positions_of(houses, k)
    if len(view) != positions:
        raise ValueError("the values do not have one byte per position of the level")
    if len(pred) != (houses + 1) ** 2 or shift not in (0, 1):
        raise ValueError("a shift of 0 or 1 and (houses + 1) ** 2 predictions")
    dest = memoryview(out).cast("B")
    if len(dest) < body_room(positions):
        raise ValueError(f"the output needs {body_room(positions)} bytes")
    blocks = blocks_of(positions)
    exc_at = blocks * 64 + groups_of(blocks) * 8
    nexc = group_first = 0
    boards = _walk(houses, k, positions)
    for blk in range(blocks):
        r0 = blk * CODES
        us = [(view[r] + k) >> shift for r in range(r0, min(positions, r0 + CODES))]
        res = [u - pred[empties_index(houses, next(boards))] for u in us]
        hist = [0] * 512
        for x in res:
            hist[x + 256] += 1
        base = -128
        best = got = sum(hist[128 : 128 + ESCAPE])
        for lo in range(-127, 128):  # the lowest start of a window of 15 residuals holding the most of them
            got += hist[lo + ESCAPE - 1 + 256] - hist[lo - 1 + 256]
            if got > best:
                base, best = lo, got
        if blk % GROUP == 0:
            group_first = nexc
            struct.pack_into("<Q", dest, blocks * 64 + blk // GROUP * 8, nexc)
        line = bytearray(64)
        before = nexc - group_first
        line[0:3] = bytes((base & 0xFF, before & 0xFF, before >> 8))
        for i, (u, x) in enumerate(zip(us, res, strict=True)):
            c = x - base
            if not 0 <= c < ESCAPE:
                c = ESCAPE
                dest[exc_at + nexc] = u
                nexc += 1
            line[3 + (i >> 1)] |= c << ((i & 1) << 2)
        dest[blk * 64 : blk * 64 + 64] = line
    return nexc


def decode_level(houses: int, k: int, data: Any, out: Any, /) -> None:
    """Every value of a level's bytes (format v1 or v2) into `out`, one signed byte per rank."""
    dest = memoryview(out).cast("B").cast("b")
    positions = positions_of(houses, k)
    if len(dest) != positions:
        raise ValueError("the values do not have one byte per position of the level")
    level = Level(data, houses, k)
    for r, board in enumerate(_walk(houses, k, positions)):
        dest[r] = level.value(r, board)
