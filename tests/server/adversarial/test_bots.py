"""Attacks through the hosted bots, against a real server: floods of exhibitions do not delay the bots of
games with a person in them, bot engines stay within their memory bound, and no request builds a database."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from protocol import Action, Position, Variant
from tests.conftest import Serve
from tests.helpers.wire import HONEST, Client, FirstLegal, eventually, is_game_over


class Hog:
    """A stand-in exhibition bot that holds its search thread until released (a long C search)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.thinking = 0
        self._lock = threading.Lock()

    def decide(self, position: Position, budget_s: float) -> Action:
        """Hold the thread until released, then play the first legal action."""
        with self._lock:
            self.thinking += 1
        self.release.wait(30)
        return position.legal_actions()[0]


class Recorder(FirstLegal):
    """A stand-in bot that plays the first legal action at once and notes each action it chose."""

    def __init__(self) -> None:
        self.chosen: list[str] = []

    def decide(self, position: Position, budget_s: float) -> Action:
        """The first legal action, noted."""
        action = super().decide(position, budget_s)
        self.chosen.append(action.token())
        return action


async def test_exhibition_flood_does_not_delay_a_persons_bot(serve: Serve) -> None:
    """With every general search thread held by exhibition bots and more exhibition moves queued, the bot of a
    person's game still moves at once (a thread is kept for games with a person)."""
    hog = Hog()
    first = Recorder()
    server = await serve(bot_factory=lambda name: hog if name == "hog" else first, bot_workers=2, bot_reserved=1)
    flooders = [await Client.open(server.url, f"flood{i}") for i in range(2)]
    try:
        for flooder in flooders:
            for _ in range(4):
                await flooder.request("snapshot", type="exhibition", variant="kalah(6,4)", south="hog", north="hog")
            await flooder.send(type="exhibition", variant="kalah(6,4)", south="hog", north="hog")
            assert await flooder.error() == "too_many"
        person = await Client.open(server.url, "person", source=HONEST)
        snap = await person.request("snapshot", type="create", opponent="first", seat="north")
        event = await person.expect("event", where=lambda m: m["kind"] == "action")
        assert (event["match_id"], event["side"]) == (snap["match_id"], "south")
        assert first.chosen == [event["action"]]  # the bot's own choice, not a fallback after a wait
        assert not hog.release.is_set() and hog.thinking == 2  # the exhibitions were all still waiting
        await person.close()
    finally:
        hog.release.set()
        for flooder in flooders:
            await flooder.close()


async def test_engines_stay_within_their_memory_bound(serve: Serve) -> None:
    """Exhibitions with many different bots keep the hosted engines' estimated memory within the bounds."""
    bound = 48 << 20
    server = await serve(engine_bytes=bound, table_bytes=bound // 2)
    host = await Client.open(server.url, "host")
    for depth in range(1, 13):
        await host.request("snapshot", type="exhibition", variant="kalah(3,3)", south=f"alphabeta:{depth}",
                           north="greedy")
        await host.expect("event", timeout=20, where=is_game_over)
        assert server.arena.bots.nbytes() <= bound
        assert server.arena.bots.engines.nbytes() - server.arena.bots.engines.level_bytes() <= bound // 2
    assert len(server.arena.bots.cached_ids()) <= 64
    await host.close()


async def test_no_request_builds_an_endgame_database(serve: Serve, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A perfect-bot exhibition on a board without databases plays without them; nothing is written to disk."""
    egdb = tmp_path / "egdb"
    monkeypatch.setenv("KALAH_EGDB_DIR", str(egdb))
    server = await serve()
    host = await Client.open(server.url, "host")
    await host.request("snapshot", type="exhibition", variant="kalah(5,2)", south="perfect", north="perfect")
    over = await host.expect("event", timeout=60, where=is_game_over)
    assert over["reason"] == "empty"
    assert not egdb.exists() or not any(egdb.rglob("*"))
    await host.close()


async def test_a_bot_thinking_for_a_person_paces_the_analysis_thread(serve: Serve) -> None:
    """While a hosted bot thinks a move in a person's match, fresh identities' analyses are paced (the loop need not
    be late): the first thinks at most 250 ms of the 1 s it asked, the next waits for the thread's rest; both are
    answered."""
    hog = Hog()
    server = await serve(bot_factory=lambda name: hog)
    analyst = server.router.analyst
    person = await Client.open(server.url, "person", source=HONEST)
    await person.request("snapshot", type="create", opponent="hog", seat="north")  # the bot sows first
    await eventually(lambda: server.arena.bots.thinking_for_people == 1, what="the bot to think for the person")
    fresh = [await Client.open(server.url, f"fresh{i}", source=f"127.1.{i}.1") for i in range(2)]
    start = Position.from_fen(Variant.parse("kalah(6,6)"), "6,6,6,6,6,6,0,6,6,6,6,6,6,0 S 0 -")
    try:
        for client in fresh:
            await client.send(type="analyse", variant="kalah(6,6)", position=start.fen(), budget_ms=1000)
        await eventually(lambda: analyst.paced == 1, what="the second analysis to wait for the pace")
        assert analyst.runs[0].cpu < 0.6  # 250 ms of thinking, not 1 s
    finally:
        hog.release.set()
    for client in fresh:  # a legal best move; depth 0 when the busy machine gave the low-priority analysis thread
        # no time to finish a first ply in its 250 ms (then the move is the board's own best guess)
        reply = await client.expect("analysis", timeout=10)
        assert reply["depth"] >= 0 and len(reply["best"]) == 1 and reply["best"][0] in start.legal_bins(), reply
    for client in (person, *fresh):
        await client.close()
