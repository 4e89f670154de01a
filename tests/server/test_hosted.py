"""Hosted bots: canonical ids and a bounded cache, humans' moves first, a bounded exhibition queue."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from concurrent.futures import Future
from pathlib import Path

import pytest

from bots.engines import HOSTED_THREADS
from bots.players import Decision
from bots.solver import Engine, relative_board
from protocol import Action, Position, Variant
from server.core.errors import UnknownBotError
from server.core.hosted import BACKGROUND_NICE, BotRunner, Chosen, Priority, _outcome
from tests.helpers.wire import FakeClock, eventually

START = Position.initial(Variant(houses=3, seeds=3))


@pytest.fixture(autouse=True)
def egdb_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Bots look for databases in an empty temporary directory."""
    monkeypatch.setenv("KALAH_EGDB_DIR", str(tmp_path))
    return tmp_path


class Blocking:
    """A stand-in bot that notes each decision, then blocks until released (or 5 s)."""

    def __init__(self, name: str, log: list[tuple[str, float]], gate: threading.Event) -> None:
        self.name, self.log, self.gate = name, log, gate

    def decide(self, position: Position, budget_s: float) -> Action:
        """Note (name, budget), wait for the gate, play the last legal action."""
        self.log.append((self.name, budget_s))
        self.gate.wait(5)
        return position.legal_actions()[-1]


class Explaining(Blocking):
    """A stand-in bot that explains its moves (as `perfect` does) after blocking like `Blocking`."""

    def explain(self, position: Position, budget_s: float) -> Decision:
        """The blocking decision, said to be proved."""
        return Decision(self.decide(position, budget_s), None, True, "proof")


def runner_of(log: list[tuple[str, float]], gate: threading.Event, reserved: int, max_queued: int = 64) -> BotRunner:
    """A runner of `Blocking` stand-ins sharing one log and gate, with one general worker."""
    return BotRunner(lambda name: Blocking(name, log, gate), 1, reserved=reserved, max_queued=max_queued)


async def test_check_gives_the_canonical_id_and_refuses_other_spellings() -> None:
    """`check` returns the canonical id; near spellings and non-ASCII digits are `unknown_bot`, made nothing."""
    runner = BotRunner()
    try:
        assert runner.check("alphabeta:9") == "alphabeta:9"
        for text in ("Random ", "random\t", "alphabeta:\u0663", "Alphabeta:9", "alphabeta:09", "perfect:20"):
            with pytest.raises(UnknownBotError) as info:
                runner.check(text)
            assert info.value.code == "unknown_bot"
        assert runner.engines.made == 0
    finally:
        runner.close()


async def test_a_flood_of_spellings_keeps_one_player_per_engine() -> None:
    """Forty spellings of a few bots make at most those bots, and their engines stay under the byte bound."""
    runner = BotRunner(engine_bytes=64 << 20)
    spellings = [s for n in range(1, 11) for s in (f"alphabeta:{n}", f"alphabeta:0{n}", f"Alphabeta:{n}", f"random{n}")]
    try:
        refused = 0
        for text in spellings:
            try:
                await runner.choose(text, START, 0.05, priority=Priority.EXHIBITION)
            except UnknownBotError:
                refused += 1
        assert refused == 30
        assert runner.cached_ids() == [f"alphabeta:{n}" for n in range(1, 11)]
        assert 0 < runner.nbytes() <= 64 << 20
    finally:
        runner.close()


async def test_human_moves_go_ahead_of_exhibition_moves() -> None:
    """With every general worker busy on exhibitions, a human's move runs at once on the reserved worker."""
    log: list[tuple[str, float]] = []
    gate = threading.Event()
    runner = runner_of(log, gate, reserved=1)
    try:
        exhibitions = [asyncio.create_task(runner.choose("bot", START, 2.0, priority=Priority.EXHIBITION))
                       for _ in range(3)]
        await eventually(lambda: len(log) == 1 and runner.queued == 2, what="one exhibition running, two queued")
        human = asyncio.create_task(runner.choose("human", START, 2.0))
        await eventually(lambda: len(log) == 2, what="the human's move to start")
        assert [name for name, _ in log] == ["bot", "human"] and runner.queued == 2
        gate.set()
        await asyncio.gather(human, *exhibitions)
    finally:
        runner.close()


async def test_queued_human_move_overtakes_queued_exhibitions() -> None:
    """Without a reserved worker, a human's move still runs before exhibition moves that queued earlier."""
    log: list[tuple[str, float]] = []
    gate = threading.Event()
    runner = runner_of(log, gate, reserved=0)
    try:
        tasks = [asyncio.create_task(runner.choose(f"bot{i}", START, 3.0, priority=Priority.EXHIBITION))
                 for i in range(3)]
        await eventually(lambda: len(log) == 1 and runner.queued == 2, what="bot0 running, two queued")
        tasks.append(asyncio.create_task(runner.choose("human", START, 3.0)))
        await eventually(lambda: runner.queued == 3, what="the human's move queued")
        gate.set()
        await asyncio.gather(*tasks)
        assert [name for name, _ in log] == ["bot0", "human", "bot1", "bot2"]
    finally:
        runner.close()


async def test_a_move_that_waited_thinks_for_what_is_left(monkeypatch: pytest.MonkeyPatch) -> None:
    """A queued move's budget counts from the request: it gets only the time left when it starts."""
    clock = FakeClock(100.0)
    monkeypatch.setattr("server.core.hosted.monotonic", clock)
    log: list[tuple[str, float]] = []
    gate = threading.Event()
    runner = runner_of(log, gate, reserved=0)
    try:
        first = asyncio.create_task(runner.choose("a", START, 1.0))
        second = asyncio.create_task(runner.choose("b", START, 1.0))
        await eventually(lambda: len(log) == 1 and runner.queued == 1, what="a running, b queued")
        clock.advance(0.4)
        gate.set()
        await asyncio.gather(first, second)
        assert dict(log) == {"a": 1.0, "b": pytest.approx(0.6)}
    finally:
        runner.close()


async def test_exhibition_queue_is_bounded_and_a_move_behind_it_waits() -> None:
    """Beyond `max_queued` waiting exhibition moves, a move waits for room (in turn) instead of being answered at
    random: every move is its bot's, none a fallback."""
    log: list[tuple[str, float]] = []
    gate = threading.Event()
    runner = runner_of(log, gate, reserved=0, max_queued=2)
    try:
        def ask() -> asyncio.Task[Action]:
            return asyncio.create_task(runner.choose("bot", START, 30.0, priority=Priority.EXHIBITION))

        waiting = [ask()]
        await eventually(lambda: len(log) == 1, what="one move running")
        waiting += [ask(), ask()]
        await eventually(lambda: runner.queued == 2, what="two moves queued")
        behind = [ask(), ask()]
        await asyncio.sleep(0.2)
        assert not any(task.done() for task in behind) and runner.queued == 2 and runner.waited == 2
        gate.set()
        actions = await asyncio.wait_for(asyncio.gather(*waiting, *behind), 10)
        assert runner.fallbacks == 0 and len(log) == 5 and set(actions) == {START.legal_actions()[-1]}
    finally:
        runner.close()


async def test_late_or_failing_bot_gets_a_random_legal_action() -> None:
    """A bot that overruns its budget well past the grace, or raises, is replaced by a random legal action."""
    log: list[tuple[str, float]] = []
    gate = threading.Event()
    runner = runner_of(log, gate, reserved=0)
    try:
        action = await runner.choose("slow", START, 0.01)  # the stand-in blocks until the gate opens
        assert action in START.legal_actions() and runner.fallbacks == 1 and not gate.is_set()
    finally:
        gate.set()
        runner.close()


async def test_the_perfect_bot_says_how_each_move_was_found_and_a_late_one_is_marked() -> None:
    """`choose_explained` gives the perfect bot's decision (proved, how); a bot that explains its moves and runs late
    gets a random move marked `late`, with no decision; a bot that does not explain them gives none."""
    runner = BotRunner()
    gate = threading.Event()
    stand_in = BotRunner(lambda name: (Explaining if name == "explains" else Blocking)(name, [], gate), 1, reserved=0)
    try:
        chosen = await runner.choose_explained("perfect", START, 1.0)
        assert chosen.explains and not chosen.late and chosen.decision is not None
        assert chosen.decision.action == chosen.action and chosen.decision.exact
        assert chosen.decision.source == "proof" and chosen.decision.origin == "proof"
        plain = await stand_in.choose_explained("slow", START, 0.01)
        assert plain.late and not plain.explains and plain.decision is None
        late = await stand_in.choose_explained("explains", START, 0.01)
        assert late.late and late.explains and late.decision is None and late.action in START.legal_actions()
    finally:
        gate.set()
        runner.close()
        stand_in.close()


async def test_a_late_move_still_queued_never_runs() -> None:
    """A move given up as late while it waited for a worker is cancelled: its bot never decides it."""
    log: list[tuple[str, float]] = []
    gate = threading.Event()
    runner = runner_of(log, gate, reserved=0)
    try:
        first = asyncio.create_task(runner.choose("busy", START, 30.0))
        await eventually(lambda: len(log) == 1, what="the first move running")
        assert await runner.choose("late", START, 0.01) in START.legal_actions()
        gate.set()
        await first
        await asyncio.sleep(0.05)
        assert [name for name, _ in log] == ["busy"] and runner.queued == 0
    finally:
        gate.set()
        runner.close()


async def test_a_bots_action_resumes_its_turn_in_the_loops_second_turn() -> None:
    """The worker's outcome reaches the waiting coroutine two loop turns after it is posted (under a flood each
    turn is long; asyncio.wait_for over wrap_future took more), and a failed decision is None."""
    turns, ticking = 0, True

    def tick() -> None:
        nonlocal turns
        turns += 1
        if ticking:
            asyncio.get_running_loop().call_soon(tick)

    done: Future[Chosen] = Future()
    done.set_result(Chosen(START.legal_actions()[0]))
    asyncio.get_running_loop().call_soon(tick)
    await asyncio.sleep(0)
    start = turns
    assert await _outcome(done, 1.0) == Chosen(START.legal_actions()[0])
    assert turns - start <= 2
    ticking = False
    failed: Future[Chosen] = Future()
    failed.set_exception(RuntimeError("bot failed"))
    assert await _outcome(failed, 1.0) is None


async def test_event_loop_keeps_serving_while_a_real_bot_searches() -> None:
    """While a C-core bot searches in its worker thread, other coroutines keep running."""
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    runner = BotRunner()
    task = asyncio.create_task(ticker())
    try:
        pos = Position.initial(Variant(houses=6, seeds=6))
        search = asyncio.create_task(runner.choose("alphabeta:14", pos, 1.0))
        await eventually(lambda: ticks >= 3 or search.done(), what="the ticker to run")
        assert not search.done()  # the loop ran other coroutines while the search was going on
        action = await search
        assert action in pos.legal_actions() and runner.fallbacks == 0
    finally:
        task.cancel()
        runner.close()


async def test_stand_in_factory_ids_must_have_the_canonical_shape() -> None:
    """With a custom factory, ids of the canonical shape reach it; others are refused before it is called."""
    made: list[str] = []

    def factory(name: str) -> Blocking:
        made.append(name)
        if name != "first":
            raise ValueError("no such bot")
        return Blocking(name, [], threading.Event())

    runner = BotRunner(factory)
    try:
        assert runner.check("first") == "first"
        for text in ("First", "first ", "other"):
            with pytest.raises(UnknownBotError):
                runner.check(text)
        assert made == ["first", "other"]
    finally:
        runner.close()


class Niceness:
    """A stand-in bot that notes its name and the OS priority (nice value) of the thread deciding."""

    def __init__(self, name: str, log: list[tuple[str, int]]) -> None:
        self.name, self.log = name, log

    def decide(self, position: Position, budget_s: float) -> Action:
        """Note (name, nice), play the last legal action."""
        self.log.append((self.name, os.getpriority(os.PRIO_PROCESS, threading.get_native_id())))
        return position.legal_actions()[-1]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread priorities are Linux's")
async def test_human_moves_run_at_the_servers_priority_and_exhibitions_below() -> None:
    """With the general worker free, a human's move still goes to the reserved worker, which runs at the
    server's own OS priority, also when asked the moment the last one was answered; exhibition moves run on the
    general worker, 10 nice levels lower."""
    log: list[tuple[str, int]] = []
    runner = BotRunner(lambda name: Niceness(name, log), 1, reserved=1)
    base = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    try:
        for _ in range(200):  # back to back: each asked as soon as the last is answered
            await runner.choose("human", START, 1.0)
        await runner.choose("show", START, 1.0, priority=Priority.EXHIBITION)
        assert log == [("human", base)] * 200 + [("show", min(19, base + BACKGROUND_NICE))]
    finally:
        runner.close()


def test_hosted_bots_prove_on_the_machines_cores() -> None:
    """The hosted bots' engines search their proofs on `HOSTED_THREADS` threads (every core, at most 4), and a proof on
    them finds what one thread finds."""
    runner = BotRunner()
    try:
        v = Variant(houses=4, seeds=3)
        assert runner.engines.threads == HOSTED_THREADS == min(os.cpu_count() or 1, 4)
        with runner.engines.borrow("perfect", v, 16) as engine:
            assert engine.workers == HOSTED_THREADS
            board = relative_board(Position.initial(v))
            assert engine.prove(board) == Engine(v, tt_log2=16, workers=1).prove(board)
    finally:
        runner.close()
