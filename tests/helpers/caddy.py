"""A throwaway Caddy in front of a test's server, running the site block of the shipped deploy/Caddyfile: https and
wss on a free loopback port with Caddy's internal CA (`tls internal`) instead of a public one, its admin endpoint
off, its data (the CA and certificates) in a temporary folder.

`caddy_proxy(upstream_port, folder)` starts it and kills it on every path (and the services' watchdog kills it if
the run itself is killed). Without `caddy` (Debian: `apt-get install caddy`; tests/install-test-deps.sh installs it)
the tests that need it are skipped, unless `KALAH_REQUIRE_SERVICES=1`, when they fail.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.pg import _free_port, _unavailable
from tests.helpers.processes import ROOT, started
from tests.helpers.services_watchdog import register

SHIPPED = ROOT / "deploy" / "Caddyfile"
"""The Caddyfile operators install (docs/deploy.md): the tests run its site block."""
SITE = "play.example.org {"
UPSTREAM = "reverse_proxy 127.0.0.1:8765"

GLOBAL = """{{
\tadmin off
\tskip_install_trust
\tauto_https disable_redirects
\thttp_port {http_port}
\thttps_port {https_port}
\tstorage file_system {{
\t\troot {data}
\t}}
}}

"""
"""Caddy's own settings for a test: no admin endpoint, high ports, its CA and state in the test's folder, nothing
installed in the system's trust store."""


def caddyfile_for_test(https_port: int, http_port: int, data: Path, upstream: int) -> str:
    """The shipped Caddyfile's site on `127.0.0.1:https_port` with Caddy's internal CA, proxying to `upstream`."""
    shipped = SHIPPED.read_text()
    assert shipped.count(SITE) == 1 and shipped.count(UPSTREAM) == 1, "the shipped Caddyfile changed shape"
    site = shipped.replace(SITE, f"https://127.0.0.1:{https_port} {{\n\tbind 127.0.0.1\n\ttls internal")
    return GLOBAL.format(http_port=http_port, https_port=https_port, data=data) + \
        site.replace(UPSTREAM, f"reverse_proxy 127.0.0.1:{upstream}")


def caddy_binary() -> str:
    """The `caddy` command (skips or fails the test without it)."""
    binary = shutil.which("caddy") or ("/usr/bin/caddy" if Path("/usr/bin/caddy").exists() else None)
    if binary is None:
        _unavailable("caddy not found: apt-get install caddy (tests/install-test-deps.sh)")
    assert binary is not None
    return binary


def caddy_env(folder: Path) -> dict[str, str]:
    """An environment whose home and data folders are in `folder` (Caddy writes its CA and state there)."""
    return {**os.environ, "HOME": str(folder), "XDG_DATA_HOME": str(folder / "data-home"),
            "XDG_CONFIG_HOME": str(folder / "config-home")}


@dataclass(frozen=True)
class CaddyProxy:
    """A running Caddy: where it listens and the root certificate of its internal CA."""

    port: int
    root: Path

    @property
    def url(self) -> str:
        """Its websocket URL (wss)."""
        return f"wss://127.0.0.1:{self.port}"

    @property
    def web_url(self) -> str:
        """Its web page's URL (https)."""
        return f"https://127.0.0.1:{self.port}"

    def client_context(self) -> ssl.SSLContext:
        """A client TLS context trusting Caddy's internal CA alone."""
        return ssl.create_default_context(cafile=str(self.root))


def _ready(port: int, root: Path) -> bool:
    """Whether Caddy answers a TLS handshake on `port` with a certificate its CA signed."""
    if not root.is_file():
        return False
    try:
        context = ssl.create_default_context(cafile=str(root))
        with socket.create_connection(("127.0.0.1", port), timeout=2) as raw, \
                context.wrap_socket(raw, server_hostname="127.0.0.1"):
            return True
    except (OSError, ssl.SSLError):
        return False


@contextlib.contextmanager
def caddy_proxy(upstream: int, folder: Path) -> Iterator[CaddyProxy]:
    """Caddy on a free port of 127.0.0.1 proxying to `127.0.0.1:upstream`; killed on the way out."""
    binary = caddy_binary()
    folder.mkdir(parents=True, exist_ok=True)
    https_port, http_port = _free_port(), _free_port()
    data = folder / "data"
    config = folder / "Caddyfile"
    config.write_text(caddyfile_for_test(https_port, http_port, data, upstream))
    root = data / "pki" / "authorities" / "local" / "root.crt"
    log = (folder / "caddy.log").open("w")
    try:
        with started([binary, "run", "--config", str(config), "--adapter", "caddyfile"], env=caddy_env(folder),
                     stdout=log, stderr=subprocess.STDOUT) as proc:
            register(f"process {proc.pid} {config}")
            deadline = time.monotonic() + 30
            while not _ready(https_port, root):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"caddy did not start: {(folder / 'caddy.log').read_text()[-2000:]}")
                time.sleep(0.05)  # a separate process starting: nothing to await
            yield CaddyProxy(https_port, root)
    finally:
        log.close()
