"""Paced exhibitions: a minimum time per move so people can follow bot games live, bounded, within the clock."""

from __future__ import annotations

from pathlib import Path

from cli.main import main
from protocol.requests import MAX_PACE_MS
from server.assembly import RunningServer
from tests.conftest import Serve
from tests.helpers.wire import Client, eventually, is_game_over

PACE_MS = 120


async def test_a_paced_exhibition_moves_no_faster_than_its_pace(arena: RunningServer) -> None:
    """Each bot move takes at least `pace_ms` (the opening is played at once), as the server's clocks measure it:
    what the mover's clock lost from the action before to its own (an hour each, so the pace is never cut short),
    not when the moves reached this client, which a busy machine can bunch up."""
    c = await Client.open(arena.url, "host")
    await c.send(type="exhibition", variant="kalah(3,2,clock=3600+0)", south="greedy", north="random",
                 opening=["1"], pace_ms=PACE_MS, match_id="paced")
    snap = await c.expect("snapshot")
    assert snap["record"] == ["1"]
    clocks: dict[str, int] | None = None
    used: list[float] = []
    while True:
        event = await c.expect("event", timeout=20)
        if event["kind"] == "action":
            if clocks is not None:  # the first bot move's clock started before the snapshot was taken
                mover = f"{event['side']}_ms"
                used.append((clocks[mover] - event["clocks"][mover]) / 1000)
            clocks = event["clocks"]
        if is_game_over(event):
            break
    assert len(used) >= 2
    assert min(used) >= PACE_MS / 1000 * 0.9, used  # a lower bound: sleeping never makes a move early
    await c.close()


async def test_pace_is_bounded_and_never_costs_a_bot_its_clock(arena: RunningServer) -> None:
    """A pace above the bound is refused (`bad_field`); with a clock, a bot waits at most half its time left."""
    c = await Client.open(arena.url, "host")
    await c.send(type="exhibition", south="greedy", north="random", pace_ms=MAX_PACE_MS + 1)
    assert await c.error() == "bad_field"
    # a pace of 10 s on a 1 s clock: unbounded, each bot would lose on time; bounded, it waits about 0.5 s and keeps
    # as much for the move to reach the clock (a loaded machine once took over 0.15 s, the half of 0.3 s, for that)
    await c.send(type="exhibition", variant="kalah(2,2,clock=1/move)", south="greedy", north="random",
                 pace_ms=MAX_PACE_MS)
    await c.expect("snapshot")
    over = await c.expect("event", timeout=30, where=is_game_over)
    assert over["reason"] in ("empty", "majority", "repetition")
    await c.close()


async def test_a_finished_paced_match_leaves_no_pace_behind(serve: Serve) -> None:
    """Forgetting a finished match (after its linger time) forgets its pace too."""
    running = await serve(linger_s=0.01)
    c = await Client.open(running.url, "host")
    await c.send(type="exhibition", variant="kalah(2,1)", south="greedy", north="greedy", pace_ms=50, match_id="p2")
    await c.expect("snapshot")
    assert running.arena.bot_turns.paces == {"p2": 0.05}
    await c.expect("event", timeout=10, where=is_game_over)
    await eventually(lambda: "p2" not in running.arena.rooms, what="the finished match forgotten")
    assert running.arena.bot_turns.paces == {}
    await c.close()


def test_ladder_pace_flag_is_checked(tmp_path: Path) -> None:
    """`kalah ladder --pace-ms` beyond the protocol's bound exits 2 before any game is played."""
    args = ["ladder", "--bots", "random,greedy", "--games", "2", "--db", str(tmp_path / "a.sqlite3")]
    assert main([*args, "--pace-ms", str(MAX_PACE_MS + 1)]) == 2
    assert not (tmp_path / "a.sqlite3").exists()
