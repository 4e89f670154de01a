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
from typing import TYPE_CHECKING, Any

from websockets.asyncio.client import ClientConnection, connect

from cli.ladder_report import pairing_of, tallies, verdict_text
from cli.ladder_schedule import OPENING_PLIES, LadderGame, schedule
from cli.ladder_stats import Sprt
from protocol.errors import KalahError
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
from protocol.names import BOT_PREFIX, ENGINE_PREFIX
from protocol.outcome import seat_score
from protocol.variant import Variant
from server.core.standings import GameResult
from server.front.outside_engines.process import EngineSpec

if TYPE_CHECKING:
    from server.front.outside_engines.local import LocalEngines

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
    engines: tuple[EngineSpec, ...] = ()
    """Local programs entered with `--engine` (KGP or ManKalah on their standard input and output)."""
    opening_plies: int = OPENING_PLIES
    sprt: Sprt | None = None
    """The test that stops a pairing once decided (None: every game is played)."""

    @property
    def players(self) -> tuple[str, ...]:
        """Every participant: the bots, then the engines."""
        return self.bots + tuple(e.name for e in self.engines)

    @property
    def report_order(self) -> tuple[str, ...]:
        """The participants as the report and the SPRT see them: the engines under test first, then the bots."""
        return tuple(e.name for e in self.engines) + self.bots

    def display(self, player: str) -> str:
        """A participant's name on the server: `bot:ID` or `engine:NAME`."""
        return (ENGINE_PREFIX if any(e.name == player for e in self.engines) else BOT_PREFIX) + player

    def digest(self, where: str) -> str:
        """A short stable id of this ladder on a given server or database."""
        parts: tuple[object, ...] = (where, self.bots, self.games, self.variant.text(), self.seed)
        if self.engines or self.opening_plies != OPENING_PLIES:  # a bots-only ladder keeps its older id
            parts += (tuple(e.text() for e in self.engines), self.opening_plies)
        return hashlib.sha256(repr(parts).encode()).hexdigest()[:12]


@dataclass(frozen=True, slots=True)
class Finished:
    """A finished ladder game: the bots as seated at the start, South's score, the margin."""

    game: LadderGame
    match_id: str
    score: float
    result: int | None
    reason: str | None
    detail: str | None = None
    """Why the game was forfeited (an engine's crash, timeout, illegal move or protocol error)."""

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


def _score(event: GameOverEvent | Snapshot, south: str) -> float:
    """The score of the player who started South (named `south` on the server) from a game's end."""
    if isinstance(event, Snapshot):  # the snapshot names the winning side: map it to its player
        winner = {"south": event.south, "north": event.north}.get(event.winner or "")
    else:
        winner = event.player
    return seat_score(None if winner is None else 0 if winner == south else 1)


class Ladder:
    """Plays a ladder's missing games on one server connection."""

    def __init__(self, config: LadderConfig, state: LadderState,
                 progress: Callable[[str], None] = print, engines: LocalEngines | None = None) -> None:
        self.config = config
        self.state = state
        self.progress = progress
        self.engines = engines
        self.schedule = schedule(list(config.players), config.games, config.variant, config.seed,
                                 config.opening_plies)
        self.results: dict[str, Finished] = {}
        self.decided: dict[tuple[str, str], str] = {}
        """Pairings the SPRT decided, and how: their remaining games are skipped."""
        self._waiters: dict[str, asyncio.Future[GameOverEvent | Snapshot]] = {}
        self._reply: asyncio.Future[Message] | None = None
        self._expect: str | None = None
        self._create = asyncio.Lock()
        for key, row in state.finished.items():
            game = next((g for g in self.schedule if g.key == key), None)
            if game is not None:
                self.results[key] = Finished(game, row["match_id"], row["score"], row.get("result"),
                                             row.get("reason"), row.get("detail"))
        for pairing in {pairing_of(g.south, g.north, config.report_order) for g in self.schedule}:
            self._judge(pairing, quiet=True)

    async def run(self, url: str) -> list[Finished]:
        """Play every missing game (up to `concurrency` at once); returns all finished games in order."""
        todo = [g for g in self.schedule if g.key not in self.results]
        if todo:
            self.progress(f"{len(self.results)} of {len(self.schedule)} games already played; "
                          f"{len(todo)} to go on {url}")
        if todo and self.engines is not None:
            await self.check_engines()
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

    async def check_engines(self) -> None:
        """Start every engine once before the first game; raises `LadderError` naming one that cannot play."""
        assert self.engines is not None
        specs = self.config.engines
        failures = await asyncio.gather(*(self.engines.check(e.name) for e in specs))
        for spec, why in zip(specs, failures, strict=True):
            if why is not None:
                raise LadderError(f"engine {spec.name} {why} (check --engine {spec.text()!r}; "
                                  "no game was started)")

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
            if pairing_of(game.south, game.north, self.config.report_order) in self.decided:
                return  # the SPRT decided this pairing: its remaining games are not played
            match_id = self.match_id(game)
            done: asyncio.Future[GameOverEvent | Snapshot] = asyncio.get_running_loop().create_future()
            self._waiters[match_id] = done
            answer = await self._request(ws, SyncMatch(match_id=match_id), about=match_id)
            names = {e.name for e in self.config.engines}
            unfinished = isinstance(answer, ErrorMessage) or (isinstance(answer, Snapshot)
                                                              and answer.status != "finished")
            if self.engines is not None and unfinished and names & {game.south, game.north}:
                del self._waiters[match_id]  # an engine game is played here, not followed over the wire
                await self._play_engines(game, match_id)
                return
            if isinstance(answer, ErrorMessage):  # not on the server yet: create it under its fixed id
                c = self.config
                answer = await self._request(ws, CreateExhibition(
                    variant=c.variant.text(), south=game.south, north=game.north,
                    opening=[a.token() for a in game.opening], rated=c.rated, match_id=match_id,
                    operator_token=c.operator_token if c.rated else None, pace_ms=c.pace_ms), about=match_id)
                if not isinstance(answer, Snapshot):
                    text = answer.message if isinstance(answer, ErrorMessage) else type(answer).__name__
                    if isinstance(answer, ErrorMessage) and answer.code == "not_operator":
                        text = ("the server starts rated games only for its operator: give its token "
                                "(--operator-token-file FILE or $KALAH_OPERATOR_TOKEN), or play --unrated")
                    raise LadderError(f"{game.south} v {game.north}: {text}")
            end = await done
            del self._waiters[match_id]
            self._record(Finished(game, match_id, _score(end, self.config.display(game.south)), end.result,
                                  end.reason))

    async def _play_engines(self, game: LadderGame, match_id: str) -> None:
        """Play (or take up) a game with local engines in the ladder's own server, and record it."""
        assert self.engines is not None
        c = self.config
        try:
            outcome = await self.engines.play(c.variant, c.rated, game.south, game.north, list(game.opening),
                                              match_id, c.pace_ms / 1000)
        except (KalahError, ValueError) as exc:
            raise LadderError(f"{game.south} v {game.north}: {exc}") from None
        if outcome is None:
            raise LadderError(f"{game.south} v {game.north}: match {match_id} did not finish")
        end = outcome.end
        self._record(Finished(game, match_id, seat_score(end.winner), end.result, str(end.reason), outcome.detail))

    def _record(self, finished: Finished) -> None:
        """Keep a finished game (durably), say so, and let the SPRT judge its pairing."""
        game, end = finished.game, finished
        self.results[game.key] = finished
        self.state.append({"key": game.key, "match_id": finished.match_id, "score": finished.score,
                           "result": end.result, "reason": end.reason, "detail": end.detail})
        margin = "" if end.result is None else f" {end.result:+d}"
        why = f"{end.reason}: {end.detail}" if end.detail else end.reason
        self.progress(f"[{len(self.results)}/{len(self.schedule)}] {game.south} v {game.north}: "
                      f"{finished.score:g}-{1 - finished.score:g}{margin} ({why}) match {finished.match_id}")
        self._judge(pairing_of(game.south, game.north, self.config.report_order))

    def _judge(self, pairing: tuple[str, str], quiet: bool = False) -> None:
        """Run the SPRT on a pairing's games; once decided, its remaining games are skipped."""
        sprt = self.config.sprt
        if sprt is None or pairing in self.decided:
            return
        games = [(f.game.key, f.game.south, f.game.north, f.score) for f in self.results.values()
                 if pairing_of(f.game.south, f.game.north, self.config.report_order) == pairing]
        tally = tallies(games, self.config.report_order)[0].get(pairing)
        if tally is None:
            return
        verdict = sprt.verdict(tally.llr(sprt))
        if verdict is not None:
            self.decided[pairing] = verdict
        if not quiet:
            done = "; its remaining games are skipped" if verdict else ""
            self.progress(f"  SPRT {pairing[0]} v {pairing[1]}: {verdict_text(tally, sprt)}{done}")
