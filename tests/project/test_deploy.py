"""The shipped deploy/ files: the Caddyfile passes `caddy validate` and is as `caddy fmt` writes it, the systemd units
pass `systemd-analyze verify` without a warning and are sandboxed, and every command they run parses, with the
config files they name."""

from __future__ import annotations

import argparse
import configparser
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from cli.config_file import apply_config
from cli.main import build_parser
from cli.serve import configure
from tests.helpers.caddy import SHIPPED, caddy_binary, caddy_env
from tests.helpers.pg import _unavailable
from tests.helpers.processes import ROOT

DEPLOY = ROOT / "deploy"
KALAH = "/opt/kalah/venv/bin/kalah"
"""Where docs/deploy.md installs the command (the units' ExecStart)."""
UNITS = ("kalah.service", "kalah-node@.service", "kalah-backup.service", "kalah-backup.timer")
SERVERS = ("kalah.service", "kalah-node@.service")
CONFIGS = {"/etc/kalah/serve.toml": DEPLOY / "serve.toml", "/etc/kalah/node-%i.toml": DEPLOY / "node.toml"}
"""The config files the units name, and the shipped examples of them."""


def unit(name: str) -> configparser.ConfigParser:
    """A shipped unit's sections and keys (a key given twice keeps its last value)."""
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(DEPLOY / name)
    return parser


def test_the_caddyfile_is_valid_and_formatted(tmp_path: Path) -> None:
    """`caddy validate` accepts the shipped Caddyfile and `caddy fmt` would not change it."""
    caddy = caddy_binary()
    env = caddy_env(tmp_path)
    done = subprocess.run([caddy, "validate", "--config", str(SHIPPED), "--adapter", "caddyfile"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "Valid configuration" in done.stdout + done.stderr, done.stderr
    formatted = subprocess.run([caddy, "fmt", str(SHIPPED)], env=env, capture_output=True, text=True, timeout=60)
    assert formatted.returncode == 0 and formatted.stdout == SHIPPED.read_text()


def stand_ins(folder: Path) -> str:
    """Copies of the shipped units in `folder` (the template as instance 1; the command pointed at a stand-in of the
    installed one, which systemd-analyze wants to find); the systemd-analyze command (skips or fails without it)."""
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        _unavailable("systemd-analyze not found (Debian's systemd package)")
    assert analyze is not None
    stand_in = folder / "kalah"
    stand_in.write_text("#!/bin/sh\n")
    stand_in.chmod(0o755)
    for name in UNITS:
        text = (DEPLOY / name).read_text().replace(KALAH, str(stand_in))
        (folder / name.replace("@.", "@1.")).write_text(text)
    return analyze


def test_the_units_verify_without_a_warning(tmp_path: Path) -> None:
    """`systemd-analyze verify` on every shipped unit prints nothing and exits 0."""
    analyze = stand_ins(tmp_path)
    names = [name.replace("@.", "@1.") for name in UNITS]
    done = subprocess.run([analyze, "verify", *names], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


@pytest.mark.parametrize("name", [*SERVERS, "kalah-backup.service"])
def test_the_services_are_sandboxed(name: str) -> None:
    """Each service runs as its own user on a read-only system with a writable state folder, no new privileges, no
    capabilities and only the system calls of a service."""
    service = unit(name)["Service"]
    assert (service["User"], service["Group"]) == ("kalah", "kalah")
    assert service["ProtectSystem"] == "strict" and service["NoNewPrivileges"] == "yes"
    assert service["ProtectHome"] == "yes" and service["PrivateTmp"] == "yes" and service["CapabilityBoundingSet"] == ""
    assert "kalah" in service["StateDirectory"].split() and service["PrivateMounts"] == "yes"
    filters = re.findall(r"^SystemCallFilter=(.*)$", (DEPLOY / name).read_text(), re.M)
    assert filters == ["@system-service", "~@privileged"]


def test_the_services_expose_little(tmp_path: Path) -> None:
    """`systemd-analyze security --offline` rates every service's exposure at most 2.0 of 10 (its "OK" band)."""
    analyze = stand_ins(tmp_path)
    for name in [*SERVERS, "kalah-backup.service"]:
        done = subprocess.run([analyze, "security", "--offline=yes", "--threshold=20", name.replace("@.", "@1.")],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout.splitlines()[-1:]


def command_of(name: str) -> list[str]:
    """A unit's ExecStart as `kalah` would get it (%i as 1, %H as a host name), the command itself left out."""
    argv = shlex.split(unit(name)["Service"]["ExecStart"].replace("%H", "arena1"))
    assert argv[0] == KALAH
    return argv[1:]


@pytest.mark.parametrize("name", SERVERS)
def test_the_servers_run_from_the_shipped_config(name: str) -> None:
    """The server units' command parses, and the config file it names (its shipped example) sets a server behind
    the local Caddy: listening on loopback where the Caddyfile sends, trusting 127.0.0.1 as the proxy."""
    argv = command_of(name)
    config = argv[argv.index("--config") + 1]
    argv[argv.index("--config") + 1] = str(CONFIGS[config])
    parser, _ = build_parser("serve")
    args = parser.parse_args([arg.replace("%i", "1") for arg in argv])
    apply_config(args, configure, argv[1:], "serve")
    assert args.host == "127.0.0.1" and args.trusted_proxy == ["127.0.0.1/32"]
    assert args.operator_token_file == "/etc/kalah/operator-token"
    if name == "kalah.service":
        assert f"reverse_proxy {args.host}:{args.port}" in SHIPPED.read_text()
        assert args.db.startswith(unit(name)["Service"]["WorkingDirectory"])
    else:
        assert args.db.startswith("postgresql://") and args.bus.startswith("redis://") and args.node_id == "arena1-1"


def test_the_backup_timer_runs_kalah_backup_daily_keeping_copies() -> None:
    """The timer starts the backup service daily (and after a boot that missed it); the service backs up the
    server's database into its own state folder, keeping the newest 14."""
    timer = unit("kalah-backup.timer")["Timer"]
    assert (timer["OnCalendar"], timer["Persistent"]) == ("daily", "true")
    parser, _ = build_parser("backup")
    args: argparse.Namespace = parser.parse_args(command_of("kalah-backup.service"))
    assert args.keep == 14 and str(args.dest) == "/var/lib/kalah-backups"
    assert "kalah-backups" in unit("kalah-backup.service")["Service"]["StateDirectory"].split()
    serve_db = [line for line in (DEPLOY / "serve.toml").read_text().splitlines() if line.startswith("db =")]
    assert serve_db == [f'db = "{args.db}"']


def test_the_deploy_page_names_the_shipped_files_and_their_settings() -> None:
    """docs/deploy.md's commands install files that are in deploy/ (and name every one), to the paths the units
    read; its health check asks the port the config sets, and its sed finds the Caddyfile's name to replace."""
    page = (ROOT / "docs" / "deploy.md").read_text()
    commands = page.split("```sh\n", 1)[1].split("```", 1)[0]
    installed = set(re.findall(r"/opt/kalah/src/deploy/([\w@.-]+)", commands))
    assert installed and all((DEPLOY / name).is_file() for name in installed)
    assert {path.name for path in DEPLOY.iterdir()} <= set(re.findall(r"deploy/([\w@.-]+)", page))
    assert "/etc/kalah/serve.toml" in commands and "/etc/kalah/operator-token" in commands
    enabled = re.search(r"systemctl enable --now (.+)", commands)
    assert enabled is not None and set(enabled.group(1).split()) <= set(UNITS)
    port = re.search(r"^port = (\d+)$", (DEPLOY / "serve.toml").read_text(), re.M)
    assert port is not None and f"curl -s http://127.0.0.1:{port.group(1)}/health" in commands
    sed = re.search(r"sed 's/([^/]+)/", commands)
    assert sed is not None and sed.group(1).replace("\\.", ".") + " {" in SHIPPED.read_text()
