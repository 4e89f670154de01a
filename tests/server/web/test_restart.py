"""The match page across a restart of its server (`kalah serve` killed with SIGKILL and started again on the same
file and port), in a real headless browser (tests/helpers/browser.py): the page reconnects to the same seat, and its
clocks are the restarted server's, which resumes them as stored at the last action."""

from __future__ import annotations

import asyncio
import os
import re
import signal
from pathlib import Path
from typing import Any

from tests.helpers.browser import SKIP, Pages, my_turn, start_from_lobby
from tests.helpers.cluster_play import start_node
from tests.helpers.wire import Client

pytestmark = SKIP


def seconds(text: str) -> float:
    """A clock's text on the page (`0:54`, `9.8 low`) in seconds."""
    found = re.match(r"(?:(\d+):)?(\d+(?:\.\d)?)", text)
    assert found, text
    return int(found[1] or 0) * 60 + float(found[2])


async def test_the_clock_after_the_server_restarts(browser: Any, tmp_path: Path) -> None:
    """The server is killed on the player's turn and started again: once the page is back its running clock shows
    what the restarted server counts (the time the server was down is not taken off), not the count the page went
    on with while the server was down."""
    db = str(tmp_path / "arena.sqlite3")
    proc, url = await start_node(db, None, "web")
    port = url.rsplit(":", 1)[1].rstrip("/")
    try:
        pages = Pages(browser, f"http://127.0.0.1:{port}")
        page = await pages.open("/")
        match_id = await start_from_lobby(page, "greedy", {"clock": "60+0"})
        assert await my_turn(page)
        os.kill(proc.pid, signal.SIGKILL)
        await proc.wait()
        await page.wait_for_function("() => document.getElementById('link').dataset.state === 'reconnecting'")
        await asyncio.sleep(6)
        proc, url = await start_node(db, None, "web", "--port", port)
        await page.wait_for_function("() => document.getElementById('link').dataset.state === 'ready'",
                                     timeout=20_000)
        await asyncio.sleep(1.5)
        host = await Client.open(url, "host")
        snap = await host.request("snapshot", type="watch", match_id=match_id)
        shown = seconds(await page.inner_text("#player-south .clock"))
        assert snap["clocks"]["running"] == "south"
        assert abs(shown - snap["clocks"]["south_ms"] / 1000) < 2, (shown, snap["clocks"])
        assert await my_turn(page) and match_id in page.url
        await host.close()
        await pages.check()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
