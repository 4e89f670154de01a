"""The `kalah` command as a whole: --version, help for every option with its default, one line per failure."""

from __future__ import annotations

import argparse
import re
import shlex
import signal
import subprocess

import pytest

from cli.main import SUBCOMMANDS, DefaultsHelpFormatter, build_parser, main, version
from tests.helpers.paths import ROOT_DIR
from tests.helpers.processes import KALAH, run, started, wait_for_state, waits_reading


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """A parser and every subcommand parser under it, depth first."""
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += _parsers(sub)
    return found


def test_version() -> None:
    """`kalah --version` prints the installed version and exits 0."""
    done = run([*KALAH, "--version"])
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"kalah {version()}\n" and version() != "unknown"


def test_every_option_has_help_that_shows_its_default() -> None:
    """Each option of each command says what it does and, when it has a default, what that is."""
    parser, _ = build_parser()
    commands = _parsers(parser)
    assert len(commands) > len(SUBCOMMANDS)
    for command in commands:
        formatter = DefaultsHelpFormatter(command.prog)
        for action in command._actions:
            if not action.option_strings or action.help == argparse.SUPPRESS:
                continue
            text = formatter._get_help_string(action) or ""
            assert text.strip(), f"{command.prog} {action.option_strings[0]} has no help"
            has_default = not any(action.default is x for x in (None, False, argparse.SUPPRESS, ""))
            if has_default and not isinstance(action, argparse._HelpAction | argparse._VersionAction):
                assert "default" in text, f"{command.prog} {action.option_strings[0]} hides its default"


def test_help_renders_defaults() -> None:
    """The rendered help of `kalah serve` names the port's default."""
    done = run([*KALAH, "serve", "--help"])
    assert done.returncode == 0, done.stderr
    assert "(default: 8765)" in done.stdout


@pytest.mark.parametrize(("argv", "line"), [
    (["play", "ws://h:1"], "kalah play: name the server with --server ws://h:1 (or set $KALAH_SERVER)"),
    (["watch", "m1"], "kalah watch: which server? give --server ws://host:port (or set $KALAH_SERVER)"),
    (["games", "--limit", "many"], "kalah games: argument --limit: 'many' is not a whole number of at least 1"),
    (["ladder", "--bots", "random,greedy", "--concurrency", "0"],
     "kalah ladder: argument --concurrency: '0' is not a whole number of at least 1"),
    (["admin", "online", "--limit", "-1"], "kalah admin: argument --limit: '-1' is not a whole number of at least 1"),
    (["nosuch"], "kalah: argument COMMAND: invalid choice: 'nosuch'"),
])
def test_mistakes_are_one_line(argv: list[str], line: str, monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    """A usage mistake is one line on stderr, status 2, no usage block and no traceback."""
    monkeypatch.delenv("KALAH_SERVER", raising=False)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(line) and err.count("\n") == 1


def test_unexpected_failure_is_one_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A failure nobody foresaw is one line with status 1 (KALAH_DEBUG=1 would show the traceback)."""
    import cli.games

    def broken(*_: object, **__: object) -> None:
        """A source that fails in an unforeseen way."""
        raise RuntimeError("disk on fire")

    monkeypatch.delenv("KALAH_DEBUG", raising=False)
    monkeypatch.setattr(cli.games, "query_games", broken)
    assert main(["games"]) == 1
    assert capsys.readouterr().err == "kalah games: failed: RuntimeError: disk on fire (KALAH_DEBUG=1 shows where)\n"


def test_ctrl_c_while_waiting_for_input_is_one_line() -> None:
    """SIGINT while `kalah record` waits on standard input: status 130, one line, no traceback."""
    with started([*KALAH, "record"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                 text=True) as proc:
        wait_for_state(proc.pid, waits_reading, "a read of its standard input")  # past start-up, in main()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and err == "kalah record: interrupted\n"


DOCUMENTED = ["README.md", "docs/terminal-client.md", "docs/ladder.md", "docs/bots.md"]


def _documented_commands(text: str) -> list[list[str]]:
    """The `kalah ...` commands of a page's sh blocks, as argument lists (comments, pipes and redirects cut)."""
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in block.splitlines():
            line = re.sub(r"\s+#.*$", "", line)
            for part in re.split(r";|&&|\|", line):
                words = shlex.split(re.sub(r"[<>].*$", "", part))
                if words[:1] == ["kalah"]:
                    commands.append(words[1:])
    return commands


@pytest.mark.parametrize("page", DOCUMENTED)
def test_documented_commands_parse(page: str) -> None:
    """Every `kalah` command shown on the README's tour and the command pages is one the parser accepts."""
    commands = _documented_commands((ROOT_DIR / page).read_text())
    assert commands
    for argv in commands:
        parser, _ = build_parser(argv[0])
        args, extra = parser.parse_known_args(argv)
        assert args.command == argv[0] and extra == [] and getattr(args, "stray", None) is None, argv
