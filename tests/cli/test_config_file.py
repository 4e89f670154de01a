"""`kalah serve --config FILE`: every flag from a TOML file, the command line winning, and a bad key or value
refused in one line naming it."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

import pytest

from cli.config_file import apply_config
from cli.main import build_parser, main
from cli.serve import configure
from cli.server_args import CommandError
from tests.helpers.processes import KALAH, first_line, started


def parsed(argv: list[str]) -> argparse.Namespace:
    """`kalah serve ARGV` parsed, then completed from its --config file."""
    parser, _ = build_parser("serve")
    args = parser.parse_args(["serve", *argv])
    apply_config(args, configure, argv, "serve")
    return args


def write(tmp_path: Path, text: str) -> Path:
    """A config file holding `text`."""
    path = tmp_path / "kalah.toml"
    path.write_text(text)
    return path


def test_the_file_gives_every_flag_and_the_command_line_wins(tmp_path: Path) -> None:
    """Keys with dashes or underscores set the flags, checked and converted as the flags are; a flag on the command
    line wins, and a repeatable one replaces the file's list."""
    config = write(tmp_path, 'host = "0.0.0.0"\nport = 8800\nmax_per_address = 5\nrate = 12.5\n'
                             'trusted-proxy = ["127.0.0.1/32", "10.0.0.0/8"]\nsynchronous = "NORMAL"\n'
                             'tls-cert = "/etc/kalah/cert.pem"\ntls-key = "/etc/kalah/key.pem"\n'
                             'operator-token-file = "/etc/kalah/token"\n')
    args = parsed(["--config", str(config)])
    assert (args.host, args.port, args.max_per_address, args.rate, args.synchronous) == ("0.0.0.0", 8800, 5, 12.5,
                                                                                         "NORMAL")
    assert args.trusted_proxy == ["127.0.0.1/32", "10.0.0.0/8"]
    assert (args.tls_cert, args.tls_key, args.operator_token_file) == ("/etc/kalah/cert.pem", "/etc/kalah/key.pem",
                                                                       "/etc/kalah/token")
    args = parsed(["--port", "9000", "--config", str(config), "--trusted-proxy", "192.0.2.1", "--operator-token", "s"])
    assert (args.port, args.trusted_proxy, args.max_per_address) == (9000, ["192.0.2.1/32"], 5)
    assert (args.operator_token, args.operator_token_file) == ("s", None), "the command line's rival flag won"


@pytest.mark.parametrize(("text", "said"), [
    ("prot = 8800\n", "unknown key 'prot': the keys are the flags of kalah serve without their dashes"),
    ("config = 'other.toml'\n", "unknown key 'config'"),
    ("port = 99999\n", "port: '99999' is not a port number 0..65535"),
    ("max-per-address = 0\n", "max-per-address: '0' is not a whole number of at least 1"),
    ("synchronous = 'OFF'\n", "synchronous: 'OFF' is not one of FULL, NORMAL"),
    ("trusted-proxy = ['10.0.0.0/33']\n", "trusted-proxy: '10.0.0.0/33' is not a network address/prefix"),
    ("port = [1, 2]\n", "port: give one value, not a list"),
    ("rate = true\n", "rate: give a string or a number, not bool True"),
    ("operator-token = 'a'\noperator-token-file = 'b'\n", "give one of operator-token, operator-token-file, not both"),
    ("port = \n", "is not TOML: "),
])
def test_a_bad_key_or_value_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                                                     said: str) -> None:
    """A key that is not a flag, or a value its flag refuses: status 2, one line naming the file and the key,
    before anything starts."""
    config = write(tmp_path, text)
    db = tmp_path / "a.sqlite3"
    assert main(["serve", "--config", str(config), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kalah serve: config {config}") and said in err and err.count("\n") == 1, err
    assert not db.exists()


def test_a_missing_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A config file that is not there: one line naming it."""
    assert main(["serve", "--config", str(tmp_path / "nope.toml")]) == 2
    assert capsys.readouterr().err == f"kalah serve: cannot read config {tmp_path / 'nope.toml'}: no such file or " \
                                      "directory\n"


def test_a_server_runs_from_its_file_alone(tmp_path: Path) -> None:
    """`kalah serve --config FILE` listens where the file says, on the database it names."""
    db = tmp_path / "arena.sqlite3"
    config = write(tmp_path, f'port = 0\ndb = "{db}"\nlog-level = "error"\n')
    with started([*KALAH, "serve", "--config", str(config)], stdout=subprocess.PIPE, text=True) as proc:
        line = first_line(proc)
        assert "listening on ws://127.0.0.1:" in line and str(db) in line, line
        proc.terminate()
        proc.wait(timeout=30)


def test_a_switch_takes_true_or_false(tmp_path: Path) -> None:
    """A flag without a value (store_true) is set by `true`, left off by `false`, and refuses anything else."""

    def switches(parser: argparse.ArgumentParser) -> None:
        """A command with one switch."""
        parser.add_argument("--config")
        parser.add_argument("--quiet", action="store_true")

    for text, quiet in (("quiet = true\n", True), ("quiet = false\n", False)):
        args = argparse.Namespace(config=str(write(tmp_path, text)), quiet=False)
        apply_config(args, switches, [], "x")
        assert args.quiet is quiet
    args = argparse.Namespace(config=str(write(tmp_path, "quiet = 1\n")), quiet=False)
    with pytest.raises(CommandError, match="quiet: give true or false, not 1"):
        apply_config(args, switches, [], "x")
