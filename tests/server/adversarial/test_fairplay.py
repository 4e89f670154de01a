"""Fair play against a real server: an untimed game cannot be held hostage by an opponent who never moves."""

from __future__ import annotations

from tests.conftest import Serve
from tests.helpers.wire import Client, FakeClock, is_game_over, live_match


async def test_untimed_game_cannot_be_held_hostage(serve: Serve, clock: FakeClock) -> None:
    """A connected opponent who never moves can be claimed against after the no-move limit; reconnecting
    does not reset it, and a move does."""
    server = await serve(clock=clock, idle_s=600, grace_s=60)
    alice, bob, mid = await live_match(server.url, "kalah(6,4)")
    await alice.request("ack", type="move", match_id=mid, ply=0, bin=1)
    clock.advance(599)
    await alice.send(type="claim", match_id=mid)
    assert await alice.error() == "claim_refused"
    token = bob.welcome["token"]
    await bob.close()  # flicker: away and back within the grace period
    await alice.expect("presence", where=lambda m: not m["north_connected"])
    bob = await Client.open(server.url, "bob", token=token)
    await alice.expect("presence", where=lambda m: m["north_connected"])
    clock.advance(1)
    await alice.send(type="claim", match_id=mid)
    over = await alice.expect("event", where=is_game_over)
    assert (over["reason"], over["winner"]) == ("abandonment", "south")
    await alice.close()
    await bob.close()


async def test_a_move_restarts_the_no_move_limit(serve: Serve, clock: FakeClock) -> None:
    """After the opponent moves, the limit counts again from that move."""
    server = await serve(clock=clock, idle_s=600)
    alice, bob, mid = await live_match(server.url, "kalah(6,4)")
    await alice.request("ack", type="move", match_id=mid, ply=0, bin=1)
    clock.advance(500)
    await bob.request("ack", type="move", match_id=mid, ply=1, bin=9)
    clock.advance(500)
    await bob.send(type="claim", match_id=mid)  # alice to move: bob waits 500 s of her 600
    assert await bob.error() == "claim_refused"
    await alice.close()
    await bob.close()
