"""The loop of `kalah bridge`: find a game, play the engine's moves in it, game after game, through reconnections.

Everything the bridge reacts to goes through one queue: the server's messages (from the
reconnecting `client.connection.Connection`), the connection's ups and downs, the engine's
answers, and the accept mode's polls; so the state (`Game`) has one writer and no locks.
Games are found by `seek`, by `create` (against a hosted bot, or open), by joining open
matches from `list`, or come from an event the bridge entered (`event_join`; the server sends
each game's snapshot as the event pairs it, and the bridge follows the event to see it end).
On the engine's turn it is asked with a deadline inside the bridge's view of the clock
(`Game.think_s`); its move is sent with its ply and kept until
acknowledged, so a move resent after a reconnection is never played twice. After a
reconnection the match is synced and moves wait for a snapshot (caught-up events carry the
clocks of their own time). A fault of the engine resigns the game, then the engine is
restarted or the bridge stops. docs/engines.md tells the user's side.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from cli.bridge_engine import START_S, EngineFault, LocalEngine
from cli.bridge_game import Game, kgp_variant
from cli.bridge_options import BridgeError, BridgeOptions
from client.connection import Connection
from protocol.event_messages import EventState, FetchEvent, JoinEvent
from protocol.kgp import Board, bin_of
from protocol.messages import (
    Ack,
    ActionEvent,
    CreateMatch,
    ErrorMessage,
    FindOpponent,
    GameOverEvent,
    JoinedEvent,
    JoinMatch,
    LeaveMatch,
    ListMatches,
    MakeMove,
    MatchList,
    Message,
    Resign,
    ServerMessage,
    Snapshot,
    SyncMatch,
    Welcome,
)
from protocol.variant import Variant
from server.front.outside_engines.agent import AgentLimits


@dataclass
class _Status:
    """The connection went up or down."""

    up: bool
    text: str


@dataclass
class _Thought:
    """The engine's move for `ply` of `match_id` (a bin), or why it could not give one."""

    match_id: str
    ply: int
    bin: int | None
    fault: str | None = None


class _Poll:
    """Time to look for open matches again (accept mode)."""


Item = tuple[ServerMessage | _Status | _Thought | _Poll, float]


class Bridge:
    """One local engine playing in a remote arena."""

    def __init__(self, options: BridgeOptions, say: Callable[[str], None] = print) -> None:
        self.o = options
        self.say = say
        self.variant: Variant = kgp_variant(options.variant)
        self.engine = LocalEngine(options.engine, AgentLimits(mode_s=START_S, pong_s=options.pong_s, rate=1e6,
                                                              burst=10**6))
        self.queue: asyncio.Queue[Item] = asyncio.Queue()
        self.loop = asyncio.get_running_loop()
        self.conn: Connection | None = None
        self.game: Game | None = None
        self.played = 0
        self.faults = 0
        """Faulty games in a row."""
        self.faulted = False
        """Whether the engine failed in the current game."""
        self.told_opponent = False
        self.stopping: str | None = None
        self.pending: dict[int, int] = {}
        """Moves decided for plies of the current game and not yet acknowledged (resent after a reconnection)."""
        self.thinking: asyncio.Task[None] | None = None
        self.think_ply = -1
        self.welcomed = False
        self.up = False
        self.resyncing = False
        """Back from a reconnection: moves wait for a snapshot (caught-up events carry their own time's clocks)."""
        self.rng = random.Random()
        self.entered = False
        """In event mode: the identity is entered in the event."""
        self._tasks: set[asyncio.Task[None]] = set()

    def post(self, item: ServerMessage | _Status | _Thought | _Poll) -> None:
        """Queue something for the loop, stamped with when it arrived."""
        self.queue.put_nowait((item, self.loop.time()))

    async def run(self) -> int:
        """Play the games; 0 when done, 1 when stopped by a fault; `BridgeError` when it could not begin."""
        try:
            await self.engine.start()
        except EngineFault as exc:
            raise BridgeError(str(exc)) from None
        name = self.o.name or _wire_name(self.engine.name) or "bridge"
        conn = self.conn = Connection(self.o.server, name, token=self.o.token, on_message=self.post,
                                      on_status=lambda up, text: self.post(_Status(up, text)), engine=True)
        running = self.loop.create_task(conn.run())
        try:
            while self.stopping is None:
                getter = self.loop.create_task(self.queue.get())
                done, _ = await asyncio.wait({getter, running}, return_when=asyncio.FIRST_COMPLETED)
                if getter not in done:
                    getter.cancel()
                    raise BridgeError(running.result() or "the connection closed")
                item, at = getter.result()
                await self.handle(item, at)
        finally:
            await conn.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(running, 5)
            for task in [*self._tasks, *([self.thinking] if self.thinking else [])]:
                task.cancel()
            await self.engine.stop()
        return 0 if self.stopping == "done" else 1

    def spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run a background task the bridge cancels when it stops."""
        task = self.loop.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def send(self, msg: Message) -> bool:
        """Send a message now (False while disconnected)."""
        return self.conn is not None and await self.conn.send(msg)

    # --- what arrives -------------------------------------------------------------------------

    async def handle(self, item: ServerMessage | _Status | _Thought | _Poll, at: float) -> None:
        """React to one thing that arrived."""
        if isinstance(item, _Status):
            self.status(item)
        elif isinstance(item, _Thought):
            await self.thought(item)
        elif isinstance(item, _Poll):
            if self.game is None:
                await self.send(ListMatches())
        elif isinstance(item, Welcome):
            await self.welcome(item)
        elif isinstance(item, Snapshot):
            await self.snapshot(item, at)
        elif isinstance(item, JoinedEvent | ActionEvent | GameOverEvent):
            await self.event(item, at)
        elif isinstance(item, Ack):
            if self.game is not None and item.match_id == self.game.match_id:
                self.pending.pop(item.ply, None)
        elif isinstance(item, MatchList):
            await self.accept(item)
        elif isinstance(item, EventState):
            await self.event_state(item)
        elif isinstance(item, ErrorMessage):
            await self.refused(item)

    def status(self, status: _Status) -> None:
        """Say when the connection is lost (once per loss), or why the first one is not made yet."""
        if not status.up and not self.welcomed:
            self.say(status.text)
        elif not status.up and self.up:
            self.say("connection lost: reconnecting (the game waits on the server; the clock runs)")
        self.up = status.up

    async def welcome(self, welcome: Welcome) -> None:
        """(Re)connected: show the identity once; resume a held seat or look for a game."""
        self.say(f"connected to {self.o.server} as {welcome.name}")
        if not self.welcomed and self.o.token is None:
            self.say(f"playing as {welcome.name}; to keep this identity, pass --token {welcome.token}")
        self.welcomed = True
        if self.game is not None:
            self.resyncing = True  # the connection syncs from the last event; a snapshot tells the clocks now
            await self.send(SyncMatch(match_id=self.game.match_id))
            return
        if welcome.seats:
            await self.send(SyncMatch(match_id=welcome.seats[0]))
        else:
            await self.find()

    async def find(self) -> None:
        """Ask for the next game as the options say."""
        o = self.o
        variant = self.variant.text()
        if o.find == "seek":
            await self.send(FindOpponent(variant=variant))
        elif o.find in ("bot", "open"):
            opponent = o.bot if o.find == "bot" else None
            await self.send(CreateMatch.model_validate({"variant": variant, "seat": o.seat, "opponent": opponent,
                                                        "rated": o.rated}))
        elif o.find == "event":
            assert o.event is not None
            await self.send(FetchEvent(event_id=o.event, follow=True))  # entered or not, and whether it ended
        else:
            await self.send(ListMatches())

    async def event_state(self, state: EventState) -> None:
        """The event's state: enter it if not yet (its variant must be one KGP can say); stop when it has ended
        and no game of ours is under way."""
        name = self.conn.name if self.conn is not None else None
        if self.o.find != "event" or state.event_id != self.o.event:
            return
        if not self.entered:
            try:
                kgp_variant(state.settings.variant)
            except ValueError as exc:
                raise BridgeError(f"event {state.event_id} plays {state.settings.variant}: {exc}") from None
            if any(row.name == name and row.active for row in state.standings):
                self.entered = True
                self.say(f"entered event {state.settings.name} ({state.event_id}): {state.settings.kind.value}, "
                         f"{state.status}, {state.settings.variant}")
            elif state.status in ("open", "running"):
                await self.send(JoinEvent(event_id=state.event_id))
                return
        if state.status in ("finished", "cancelled") and self.game is None:
            self.say(f"event {state.event_id} {state.status}: {self.played} game(s) played")
            self.stopping = "done"

    async def accept(self, listing: MatchList) -> None:
        """Join the first open match of the variant someone else created; else look again later."""
        if self.game is not None or self.o.find != "accept":
            return
        me = self.conn.name if self.conn is not None else None
        for m in listing.matches:
            if m.status == "open" and _same_variant(m.variant, self.variant) and me not in (m.south, m.north):
                await self.send(JoinMatch(match_id=m.match_id))
                return
        self.spawn(self._poll_later())

    async def _poll_later(self) -> None:
        """Post a poll after the accept mode's interval."""
        await asyncio.sleep(self.o.poll_s)
        self.post(_Poll())

    async def refused(self, error: ErrorMessage) -> None:
        """A refusal: a lost join is looked for again; one about the game is said and the match resynced."""
        game = self.game
        if error.code == "shutting_down":
            return  # the connection drops next; the bridge looks again once reconnected
        if error.request == "join":
            self.spawn(self._poll_later())
        elif error.request == "sync" and (game is None or error.match_id == game.match_id):
            if game is not None:
                self.say(f"game {self.played + 1}: {game.match_id} is gone from the server: {error.message}")
                self.game = None
            self.resyncing = False
            await self.find()  # the seat held is gone: look for a game
        elif error.request in ("seek", "create"):
            raise BridgeError(f"the server refused to start a game: {error.message}")
        elif error.request in ("event", "event_join") and self.o.find == "event":
            raise BridgeError(f"the server refused to enter event {self.o.event}: {error.code}: {error.message}")
        elif error.request in ("move", "resign") and game is not None and error.match_id == game.match_id:
            self.say(f"game {self.played + 1}: the server refused the {error.request}: {error.message}")
            await self.send(SyncMatch(match_id=game.match_id, since=game.seq))

    async def snapshot(self, snap: Snapshot, at: float) -> None:
        """A match's whole state: adopt it as the current game if it is one of ours, or resync ours."""
        if snap.you is None:
            return
        if self.game is None:
            if snap.status == "finished":
                return
            self.game = Game(snap, at)
            self.pending.clear()
            self.faulted = self.told_opponent = self.resyncing = False
            g = self.game
            self.say(f"game {self.played + 1}: {g.match_id} as {g.side.name.lower()} against "
                     f"{g.opponent or '(open seat)'}, {g.variant.text()}")
            self.engine.tell("game:id", g.match_id)
        elif snap.match_id == self.game.match_id:
            self.game.reset(snap, at)
            self.resyncing = False
        else:
            return
        await self.play()

    async def event(self, event: JoinedEvent | ActionEvent | GameOverEvent, at: float) -> None:
        """A numbered event of our match: apply it (a gap asks for a resync), then play or finish."""
        game = self.game
        if game is None or event.match_id != game.match_id:
            return
        applied = game.advance(event, at)
        if applied is None:
            await self.send(SyncMatch(match_id=game.match_id, since=game.seq))
        elif applied:
            await self.play()

    # --- playing -----------------------------------------------------------------------------

    async def play(self) -> None:
        """Whatever the current game needs now: finish it, send a move already decided, or ask the engine."""
        game = self.game
        if game is None:
            return
        if game.status == "finished":
            await self.finished(game)
            return
        if not game.our_turn or self.resyncing:
            return
        ply = game.position.ply
        if ply in self.pending:
            await self.send(MakeMove(match_id=game.match_id, ply=ply, bin=self.pending[ply]))
            return
        if self.thinking is not None and not self.thinking.done() and self.think_ply == ply:
            return
        if game.opponent and not self.told_opponent:
            self.engine.tell("game:opponent", game.opponent)
            self.told_opponent = True
        self.think_ply = ply
        self.thinking = self.loop.create_task(self.think(game, ply))

    async def think(self, game: Game, ply: int) -> None:
        """Ask the engine for the move at `ply` (a single legal move is played without asking)."""
        legal = game.position.legal_bins()
        if len(legal) == 1:
            self.post(_Thought(game.match_id, ply, legal[0]))
            return
        now = self.loop.time()
        think = game.think_s(now, self.o.move_s, self.o.margin_s)
        board = Board.of(game.position, game.side)
        try:
            answer = await self.engine.ask(board, think, game.time_options(think, now, self.o.margin_s))
        except EngineFault as exc:
            self.post(_Thought(game.match_id, ply, None, str(exc)))
            return
        houses = game.variant.houses
        if answer.move is None and self.o.find == "event":  # an event's game: no move forfeits, as on the gateway
            self.post(_Thought(game.match_id, ply, None, f"the engine sent no move in {think:.2f} s"))
            return
        if answer.move is None:
            chosen = self.rng.choice(legal)
            self.say(f"game {self.played + 1}: the engine sent no move in {think:.2f} s: a random legal move")
            self.post(_Thought(game.match_id, ply, chosen))
            return
        chosen = bin_of(answer.move, game.side, houses) if 1 <= answer.move <= houses else 0
        if chosen not in legal:
            self.post(_Thought(game.match_id, ply, None, f"the engine sent an illegal move ({answer.move})"))
            return
        self.post(_Thought(game.match_id, ply, chosen))

    async def thought(self, t: _Thought) -> None:
        """The engine's move: send it (kept until acknowledged); a fault: resign the game."""
        game = self.game
        if game is None or t.match_id != game.match_id or game.status != "live":
            return
        if t.fault is not None:
            await self.fault(game, t.fault)
            return
        if t.bin is None or game.position.ply != t.ply or not game.our_turn:
            return
        self.pending[t.ply] = t.bin
        await self.send(MakeMove(match_id=game.match_id, ply=t.ply, bin=t.bin))

    async def fault(self, game: Game, why: str) -> None:
        """Resign the game for the engine's fault, then restart the engine or stop, as the options say."""
        self.faulted = True
        restart = self.o.on_fault == "restart" and self.faults + 1 < self.o.max_faults
        then = "restarting the engine" if restart else "stopping"
        self.say(f"game {self.played + 1}: {why}: resigned; {then}")
        await self.send(Resign(match_id=game.match_id))
        await self.engine.stop()
        if restart:
            try:
                await self.engine.start()
            except EngineFault as exc:
                self.say(f"cannot restart the engine: {exc}")
                self.o.on_fault = "stop"

    async def finished(self, game: Game) -> None:
        """The game ended: say how, tell the engine, stop following it, and go on or stop."""
        ending = game.ending
        text = ending.text() if ending is not None else "over"
        self.played += 1
        self.say(f"game {self.played}: {text} ({game.match_id} against {game.opponent})")
        if not self.faulted:
            self.engine.tell("arena:result", text)  # our gateway's extension: the engine hears how it did
        self.game = None
        self.resyncing = False
        self.pending.clear()
        self.engine.interrupt()
        await self.send(LeaveMatch(match_id=game.match_id))
        self.faults = self.faults + 1 if self.faulted else 0
        if self.faulted and (self.o.on_fault == "stop" or self.faults >= self.o.max_faults):
            self.say(f"stopped after {self.played} game(s): the engine failed")
            self.stopping = "fault"
        elif self.o.games and self.played >= self.o.games:
            self.stopping = "done"
        else:
            if not self.engine.alive:
                await self.engine.stop()
                try:
                    await self.engine.start()
                except EngineFault as exc:
                    self.say(f"cannot restart the engine: {exc}")
                    self.stopping = "fault"
                    return
            await self.find()


def _wire_name(name: str | None) -> str | None:
    """The engine's own name made fit for the wire (letters, digits and `_.:-`, at most 32)."""
    cleaned = re.sub(r"[^A-Za-z0-9_.:-]", "", name or "")[:32]
    return cleaned or None


def _same_variant(text: str, variant: Variant) -> bool:
    """Whether a listed variant is `variant` (one that does not parse is not)."""
    try:
        return Variant.parse(text).text() == variant.text()
    except ValueError:
        return False
