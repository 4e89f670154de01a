"""`kalah event create|list|show|results` against a real server: the events it lists, the standings and
crosstable it prints, JSON that matches the wire, records that `kalah record` reads back, one-line errors."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from cli.main import main
from tests.conftest import Serve
from tests.helpers.processes import KALAH, ROOT
from tests.helpers.wire import Client, FirstLegal


@pytest.fixture(autouse=True)
def _own_identities(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """identities.json of these tests only."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


async def _kalah(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run `kalah ARGV` off the event loop (the server runs on it); status, standard output and error."""
    status = await asyncio.to_thread(main, list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def _firsts(name: str) -> FirstLegal:
    """Stand-in bots `first:N`, each playing the first legal action."""
    if not name.startswith("first"):
        raise ValueError(f"no bot {name}")
    return FirstLegal()


async def test_create_a_round_robin_of_bots_then_list_show_and_results(
        serve: Serve, capsys: pytest.CaptureFixture[str]) -> None:
    """A round-robin of three hosted bots made from the command line starts at once and plays to its end;
    list, show and results print it, and --json is the wire's answer."""
    running = await serve(bot_factory=_firsts)
    status, out, err = await _kalah(capsys, "event", "create", "Bot cup", "--kind", "round_robin", "--cycles", "1",
                                    "--variant", "kalah(2,2)", "--clock", "30+0", "--min-entrants", "3",
                                    "--bot", "first:1", "--bot", "first:2", "--bot", "first:3", "--name", "host",
                                    "--server", running.url, "--json")
    assert status == 0, err
    created = json.loads(out)
    eid = created["event_id"]
    assert created["settings"]["variant"] == "kalah(2,2,clock=30+0)" and created["creator"] == "host"
    assert created["status"] == "running" and created["rounds"] == 3
    watcher = await Client.open(running.url, "watcher")
    try:
        state = await watcher.request("event_state", type="event", event_id=eid, follow=True)
        if state["status"] != "finished":
            await watcher.expect("event_state", 20.0, lambda m: m["status"] == "finished")
    finally:
        await watcher.close()
    status, out, _ = await _kalah(capsys, "event", "list", "--server", running.url)
    assert status == 0
    assert out.splitlines()[1].split() == [eid, "round_robin", "finished", "3/3", "3/16", "Bot", "cup"]
    status, out, _ = await _kalah(capsys, "event", "show", eid, "--server", running.url)
    assert status == 0 and out.startswith(f"Bot cup ({eid}): round_robin, finished, round 3/3")
    assert sorted(line.split()[1] for line in out.splitlines()[3:6]) == ["bot:first:1", "bot:first:2", "bot:first:3"]
    status, out, _ = await _kalah(capsys, "event", "results", eid, "--server", running.url)
    assert status == 0 and sum(" bye" in line for line in out.splitlines()) == 3
    status, out, _ = await _kalah(capsys, "event", "list", "--server", running.url, "--json")
    assert [e["event_id"] for e in json.loads(out)["events"]] == [eid]


async def test_a_finished_swiss_prints_its_crosstable_and_records(serve: Serve,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Four people's Swiss of one round, played over the wire: `results` prints the crosstable and the games'
    lines, and `--records` the games as `kalah export` does, which `kalah record --json` reads back."""
    running = await serve()
    names = ["ann", "ben", "cat", "dan"]
    clients = {n: await Client.open(running.url, n) for n in names}
    try:
        settings = {"name": "Quick", "kind": "swiss", "rounds": 1, "variant": "kalah(1,1,clock=60+1)",
                    "min_entrants": 4}
        eid = (await clients["ann"].request("event_state", type="event_create", settings=settings))["event_id"]
        for n in names:
            state = await clients[n].request("event_state", type="event_join", event_id=eid)
        for p in state["pairings"]:
            await clients[p["south"]].send(type="move", match_id=p["match_id"], ply=0, bin=1)
        await clients["ann"].expect("event_state", 10.0, lambda m: m["status"] == "finished")
        status, out, err = await _kalah(capsys, "event", "results", eid, "--server", running.url)
        assert status == 0, err
        lines = out.splitlines()
        assert lines[0] == f"Quick ({eid}): swiss, finished, round 1/1, kalah(1,1,clock=60+1), by ann"
        assert sum(" 1/2-1/2 " in line for line in lines) == 2
        assert any(line.split()[:3] == ["1", "ann", "0.5"] for line in lines)
        status, out, _ = await _kalah(capsys, "event", "results", eid, "--records", "--server", running.url)
        games = ["# match:" + text for text in out[out.index("# match:"):].split("# match:")[1:]]
        assert len(games) == 2
        for text in games:
            status, out, err = await _kalah(capsys, "record", "--json", text)
            assert status == 0, err
            read = json.loads(out)
            assert read["over"] and read["result"] == 0 and read["match_id"].startswith(f"{eid}-r1-t")
        status, out, _ = await _kalah(capsys, "event", "show", eid, "--server", running.url, "--json")
        assert json.loads(out)["status"] == "finished"
    finally:
        for c in clients.values():
            await c.close()


async def test_records_of_a_long_event_pipe_into_kalah_record(serve: Serve, tmp_path: Path) -> None:
    """A double round-robin of 16 bots (240 games): `kalah event results ID --records | kalah record --json -`, as
    docs/events.md shows, reads every game (before: the standings came first and `kalah record` exited 2 on them,
    and only the latest 200 games were printed)."""
    running = await serve(bot_factory=_firsts)
    bots = [arg for n in range(1, 17) for arg in ("--bot", f"first:{n}")]
    created = await asyncio.to_thread(subprocess.run, [*KALAH, "event", "create", "Long cup", "--kind",
                                      "round_robin", "--cycles", "2", "--variant", "kalah(1,1)", "--min-entrants",
                                      "16", *bots, "--name", "host", "--server", running.url, "--json"],
                                      capture_output=True, text=True, env=_env(tmp_path), timeout=60)
    assert created.returncode == 0, created.stderr
    eid = json.loads(created.stdout)["event_id"]
    watcher = await Client.open(running.url, "watcher")
    try:
        state = await watcher.request("event_state", type="event", event_id=eid, follow=True)
        if state["status"] != "finished":
            await watcher.expect("event_state", 120.0, lambda m: m["status"] == "finished")
    finally:
        await watcher.close()
    results = f"{shlex.join([*KALAH, 'event', 'results', eid, '--records', '--server', running.url])}"
    piped = await asyncio.to_thread(subprocess.run, f"{results} | {shlex.join([*KALAH, 'record', '--json', '-'])}",
                                    shell=True, capture_output=True, text=True, env=_env(tmp_path), timeout=120)
    assert piped.returncode == 0, piped.stderr
    games = [json.loads(line) for line in piped.stdout.splitlines()]
    assert len(games) == 240
    assert len({g["match_id"] for g in games}) == 240 and all(g["over"] for g in games)
    assert {g["match_id"].split("-")[1] for g in games} == {f"r{n}" for n in range(1, 31)}


def _env(tmp_path: Path) -> dict[str, str]:
    """The environment of a `kalah` child: this tree's code, identities under the test's directory."""
    return {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(tmp_path / "config")}


async def test_errors_are_one_line(serve: Serve, capsys: pytest.CaptureFixture[str]) -> None:
    """Settings that do not fit, an unknown event and no server: one line naming the problem, status 2."""
    running = await serve()
    status, _, err = await _kalah(capsys, "event", "create", "x", "--kind", "arena", "--server", running.url)
    assert status == 2 and err.strip() == "kalah event: event: an arena needs duration_s, and only an arena has one"
    status, _, err = await _kalah(capsys, "event", "show", "nope", "--server", running.url)
    assert status == 2 and err.strip() == "kalah event: unknown_event: no event 'nope': see events"
    status, _, err = await _kalah(capsys, "event", "list", "--server", "ws://127.0.0.1:9")
    assert status == 2 and err.startswith("kalah event: cannot reach ws://127.0.0.1:9") and len(err.splitlines()) == 1


async def test_another_name_on_the_same_server_keeps_the_login_names_token(
        serve: Serve, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`kalah event create` says hello as the login name, a later one with `--name alice` as alice: the login name's
    token is still there, so a third create as the login name is the same player (before: "the name is taken")."""
    monkeypatch.setenv("LOGNAME", "zed")
    running = await serve()
    flags = ["--kind", "swiss", "--rounds", "1", "--server", running.url]
    status, out, err = await _kalah(capsys, "event", "create", "First", *flags)
    assert status == 0 and "by zed" in out, err
    status, out, err = await _kalah(capsys, "event", "create", "Second", *flags, "--name", "alice")
    assert status == 0 and "by alice" in out, err
    status, out, err = await _kalah(capsys, "event", "create", "Third", *flags)
    assert status == 0 and "by zed" in out and err == "", err


async def test_a_variants_own_clock_stands_unless_clock_is_given(serve: Serve,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """`--variant "kalah(4,3,clock=10+0)"` plays 10+0 (before: the --clock default 60+1, without a word); `--clock`
    alone sets it, neither gives 60+1, the same clock twice is fine, and two different clocks are refused in one
    line before the server is asked."""
    running = await serve()
    flags = ["--kind", "swiss", "--rounds", "1", "--server", running.url, "--json"]
    for n, (variant, clock, plays) in enumerate((("kalah(4,3,clock=10+0)", None, "kalah(4,3,clock=10+0)"),
                                  ("kalah(4,3)", "5/move", "kalah(4,3,clock=5/move)"),
                                  ("kalah(4,3)", None, "kalah(4,3,clock=60+1)"),
                                  ("kalah(4,3,clock=10+0)", "10+0", "kalah(4,3,clock=10+0)"))):
        more = ["--name", f"host{n}"] + ([] if clock is None else ["--clock", clock])
        status, out, err = await _kalah(capsys, "event", "create", "Cup", "--variant", variant, *more, *flags)
        assert status == 0, err
        assert json.loads(out)["settings"]["variant"] == plays
    status, out, err = await _kalah(capsys, "event", "create", "Cup", "--variant", "kalah(4,3,clock=10+0)",
                                    "--clock", "60+1", *flags)
    assert status == 2 and out == ""
    assert err == "kalah event: --variant says clock=10+0 and --clock says 60+1: give one of them\n"


@pytest.mark.parametrize(("flags", "said"), [
    (["--kind", "swiss", "--rounds", "-3"], "argument --rounds: '-3' is not a whole number of 1 to 30"),
    (["--kind", "arena", "--duration", "0"], "argument --duration: '0' is not a whole number of 10 to 86400"),
    (["--kind", "swiss", "--rounds", "3", "--min-entrants", "1"],
     "argument --min-entrants: '1' is not a whole number of 2 to 256"),
    (["--kind", "swiss", "--rounds", "31"], "argument --rounds: '31' is not a whole number of 1 to 30"),
    (["--kind", "swiss", "--rounds", "3", "--max-entrants", "999"],
     "argument --max-entrants: '999' is not a whole number of 2 to 256"),
    (["--kind", "round_robin", "--sanity-games", "21"],
     "argument --sanity-games: '21' is not a whole number of 0 to 20"),
    (["--kind", "swiss", "--rounds", "3", "--start-in", "-60"],
     "argument --start-in: '-60' is not a whole number of at least 0"),
])
def test_counts_below_their_bounds_are_refused_by_their_flags(flags: list[str], said: str,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A count out of its range is refused in one line naming the flag and its bounds, before any server is asked
    (before: pydantic's 'event rounds: Input should be greater than or equal to 1', or none for --start-in)."""
    assert main(["event", "create", "Cup", *flags, "--server", "ws://127.0.0.1:9"]) == 2
    assert capsys.readouterr().err == f"kalah event create: {said} (see kalah event create --help)\n"


async def test_an_engines_round_robin_with_a_sanity_stage_from_the_command_line(
        serve: Serve, capsys: pytest.CaptureFixture[str]) -> None:
    """`--entry engines --sanity-games 2` make an event for outside engines that asks each for two wins against
    random first; a value out of range is one line."""
    running = await serve()
    argv = ["event", "create", "KGP final", "--kind", "round_robin", "--clock", "5/move", "--entry", "engines",
            "--name", "host", "--server", running.url, "--json"]
    status, out, err = await _kalah(capsys, *argv, "--sanity-games", "2")
    assert status == 0, err
    settings = json.loads(out)["settings"]
    assert (settings["entry"], settings["sanity_games"]) == ("engines", 2)
    assert settings["variant"] == "kalah(6,4,clock=5/move)"
    status, _, err = await _kalah(capsys, *argv, "--sanity-games", "21")
    assert status != 0 and len(err.strip().splitlines()) == 1 and "--sanity-games: '21'" in err
