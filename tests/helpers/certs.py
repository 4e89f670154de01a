"""A test certificate authority and a server certificate it signed, made with the `openssl` command, and a client TLS
context that trusts that authority alone."""

from __future__ import annotations

import ssl
import subprocess
from dataclasses import dataclass
from pathlib import Path

SAN = "subjectAltName=DNS:localhost,IP:127.0.0.1"


@dataclass(frozen=True)
class Certificate:
    """A server certificate for localhost and 127.0.0.1, its key, and the authority that signed it."""

    cert: Path
    key: Path
    ca: Path

    def client_context(self) -> ssl.SSLContext:
        """A client context that trusts this test authority (and checks the host name)."""
        return ssl.create_default_context(cafile=str(self.ca))


def _openssl(*args: str, cwd: Path) -> None:
    """Run `openssl args` in `cwd`, failing the test with its output if it fails."""
    done = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def make_certificate(folder: Path) -> Certificate:
    """A fresh authority and a certificate it signed for localhost and 127.0.0.1, valid two days, in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes")
    _openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Kalah test CA",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
             cwd=folder)
    _openssl("req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost", cwd=folder)
    (folder / "server.ext").write_text(f"{SAN}\nextendedKeyUsage=serverAuth\n")
    _openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", "server.pem", "-days", "2", "-extfile", "server.ext", cwd=folder)
    return Certificate(folder / "server.pem", folder / "server.key", folder / "ca.pem")
