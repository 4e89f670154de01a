"""The bot ladder: every pairing's games played as exhibition matches on a server, resumable.

Each game is a real stored match (watchable live, replayable) under a match id fixed by the
ladder's settings and its place in the schedule, which the server never creates twice. A
ladder stopped at any moment and run again follows the games the server already has and
plays only what is missing; finished games are also appended to a state file (one JSON line
each, flushed and fsynced) so a rerun need not ask the server about them.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from cli.ladder_schedule import LadderGame, schedule
from protocol.messages import (
    CreateExhibition,
    ErrorMessage,
    GameOverEvent,
    Hello,
    MatchEvent,
    Message,
    Snapshot,
    SyncMatch,
    Welcome,
    decode_server,
    encode,
)
from protocol.outcome import seat_score
from protocol.variant import Variant
from server.standings import GameResult

LADDER_NAME = "ladder"
"""The ladder's display name starts with this; a random suffix keeps it unique on the server."""


class LadderError(Exception):
    """The server refused a ladder game, or the connection failed."""


@dataclass(frozen=True, slots=True)
class LadderConfig:
    """What a ladder plays: bots, games per pairing, the variant, the openings' seed, concurrency."""

    bots: tuple[str, ...]
    games: int
    variant: Variant = field(default_factory=Variant)
    seed: int = 0
    concurrency: int = max(1, os.cpu_count() or 1)
    rated: bool = True
    operator_token: str | None = field(default=None, repr=False, compare=False)
    """The server operator's secret, without which the server refuses rated exhibitions."""
    pace_ms: int = 0
    """The minimum time per move the server holds each game to (0: as fast as the bots play)."""

    def digest(self, where: str) -> str:
        """A short stable id of this ladder on a given server or database."""
        text = repr((where, self.bots, self.games, self.variant.text(), self.seed))
        return hashlib.sha256(text.encode()).hexdigest()[:12]


@dataclass(frozen=True, slots=True)
class Finished:
    """A finished ladder game: the bots as seated at the start, South's score, the margin."""

    game: LadderGame
    match_id: str
    score: float
    result: int | None
    reason: str | None

    def as_result(self) -> GameResult:
        """The game for the standings."""
        return GameResult(self.game.south, self.game.north, self.score)


class LadderState:
    """The append-only file of finished games (the server's match ids tell started ones)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.finished: dict[str, dict[str, Any]] = {}
        if path.exists():
            for line in path.read_text().splitlines():
                try:
                    row = json.loads(line)
                except ValueError:
                    continue  # a line cut short by a crash: that game is simply followed again
                self.finished[row["key"]] = row

    def append(self, row: dict[str, Any]) -> None:
        """Append one finished game durably."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a") as f:
            f.write(json.dumps(row) + "\n")
            f.flush()
            os.fsync(f.fileno())
        self.finished[row["key"]] = row


def _score(event: GameOverEvent | Snapshot, game: LadderGame) -> float:
    """South-starting bot's score from a game-over event or finished snapshot."""
    if isinstance(event, Snapshot):  # the snapshot names the winning side: map it to its player
        winner = {"south": event.south, "north": event.north}.get(event.winner or "")
    else:
        winner = event.player
    return seat_score(None if winner is None else 0 if winner == f"bot:{game.south}" else 1)


class Ladder:
    """Plays a ladder's missing games on one server connection."""

    def __init__(self, config: LadderConfig, state: LadderState,
                 progress: Callable[[str], None] = print) -> None:
        self.config = config
        self.state = state
        self.progress = progress
        self.schedule = schedule(list(config.bots), config.games, config.variant, config.seed)
        self.results: dict[str, Finished] = {}
        self._waiters: dict[str, asyncio.Future[GameOverEvent | Snapshot]] = {}
        self._reply: asyncio.Future[Message] | None = None
        self._expect: str | None = None
        self._create = asyncio.Lock()
        for key, row in state.finished.items():
            game = next((g for g in self.schedule if g.key == key), None)
            if game is not None:
                self.results[key] = Finished(game, row["match_id"], row["score"], row.get("result"),
                                             row.get("reason"))

    async def run(self, url: str) -> list[Finished]:
        """Play every missing game (up to `concurrency` at once); returns all finished games in order."""
        todo = [g for g in self.schedule if g.key not in self.results]
        if todo:
            self.progress(f"{len(self.results)} of {len(self.schedule)} games already played; "
                          f"{len(todo)} to go on {url}")
        async with connect(url, max_size=2**20) as ws:
            await ws.send(encode(Hello(name=f"{LADDER_NAME}-{secrets.token_hex(4)}")))
            reader = asyncio.create_task(self._read(ws))
            try:
                await self._expect_welcome()
                gate = asyncio.Semaphore(self.config.concurrency)
                await asyncio.gather(*(self._play(ws, gate, g) for g in todo))
            finally:
                reader.cancel()
        return [self.results[g.key] for g in self.schedule if g.key in self.results]

    async def _expect_welcome(self) -> None:
        """Wait for the answer to hello."""
        self._reply = asyncio.get_running_loop().create_future()
        answer = await asyncio.wait_for(self._reply, 10)
        if isinstance(answer, ErrorMessage):
            raise LadderError(f"server refused hello: {answer.message}")

    async def _read(self, ws: ClientConnection) -> None:
        """Route every server message: replies to the pending request, game ends to their waiters."""
        async for data in ws:
            msg = decode_server(data)
            if isinstance(msg, MatchEvent):
                if isinstance(msg, GameOverEvent):
                    self._resolve(msg.match_id, msg)
                continue
            if isinstance(msg, Snapshot):
                if msg.status == "finished":
                    self._resolve(msg.match_id, msg)
                is_reply = msg.match_id == self._expect or (self._expect is None and msg.match_id not in self._waiters)
                if not is_reply:
                    continue
            pending = self._reply
            if isinstance(msg, Snapshot | ErrorMessage | Welcome) and pending is not None and not pending.done():
                pending.set_result(msg)

    def _resolve(self, match_id: str, msg: GameOverEvent | Snapshot) -> None:
        """Hand a game's end to whoever waits for it."""
        fut = self._waiters.get(match_id)
        if fut is not None and not fut.done():
            fut.set_result(msg)

    async def _request(self, ws: ClientConnection, msg: Message, about: str | None = None) -> Message:
        """Send one request (about match `about`, None: a new one) and wait for its direct answer."""
        async with self._create:
            self._expect = about
            self._reply = asyncio.get_running_loop().create_future()
            await ws.send(encode(msg))
            return await asyncio.wait_for(self._reply, 30)

    def match_id(self, game: LadderGame) -> str:
        """The id this ladder gives a game's match: creating it again is refused, so never doubled."""
        return f"lad-{self.config.digest('')}-{self.schedule.index(game):05d}"

    async def _play(self, ws: ClientConnection, gate: asyncio.Semaphore, game: LadderGame) -> None:
        """Follow a game's match if the server has it (an earlier run started it), else start it; await its end."""
        async with gate:
            match_id = self.match_id(game)
            done: asyncio.Future[GameOverEvent | Snapshot] = asyncio.get_running_loop().create_future()
            self._waiters[match_id] = done
            answer = await self._request(ws, SyncMatch(match_id=match_id), about=match_id)
            if isinstance(answer, ErrorMessage):  # not on the server yet: create it under its fixed id
                c = self.config
                answer = await self._request(ws, CreateExhibition(
                    variant=c.variant.text(), south=game.south, north=game.north,
                    opening=[a.token() for a in game.opening], rated=c.rated, match_id=match_id,
                    operator_token=c.operator_token if c.rated else None, pace_ms=c.pace_ms), about=match_id)
                if not isinstance(answer, Snapshot):
                    text = answer.message if isinstance(answer, ErrorMessage) else type(answer).__name__
                    raise LadderError(f"{game.south} v {game.north}: {text}")
            end = await done
            del self._waiters[match_id]
            score = _score(end, game)
            finished = Finished(game, match_id, score, end.result, end.reason)
            self.results[game.key] = finished
            self.state.append({"key": game.key, "match_id": match_id, "score": score, "result": end.result,
                               "reason": end.reason})
            margin = "" if end.result is None else f" {end.result:+d}"
            self.progress(f"[{len(self.results)}/{len(self.schedule)}] {game.south} v {game.north}: "
                          f"{score:g}-{1 - score:g}{margin} ({end.reason}) match {match_id}")
