"""TLS on the server's own port (`kalah serve --tls-cert FILE --tls-key FILE`): https pages and wss websockets for
a small server without a reverse proxy in front."""

from __future__ import annotations

import ssl
from pathlib import Path


class TlsError(ValueError):
    """A certificate or key the server cannot use: one line naming the file and the fix."""


def _no_password() -> bytes:
    """No pass phrase: an encrypted key is refused instead of prompted for."""
    return b""


def tls_context(cert: str | None, key: str | None) -> ssl.SSLContext | None:
    """The server's TLS context when both files are given, None when neither is; one alone is refused."""
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        raise TlsError("give --tls-cert and --tls-key together (the certificate and its private key)")
    return server_context(cert, key)


def server_context(cert: str | Path, key: str | Path) -> ssl.SSLContext:
    """A TLS server context (TLS 1.2 or later) with the PEM certificate chain `cert` and its private key `key`."""
    for what, path in (("certificate", cert), ("key", key)):
        if not Path(path).is_file():
            raise TlsError(f"TLS {what} {str(path)!r} is not a readable file (give a PEM file)")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(str(cert), str(key), password=_no_password)
    except PermissionError:
        raise TlsError(f"cannot read TLS certificate {str(cert)!r} or key {str(key)!r}: permission denied "
                       "(let the server's user read them)") from None
    except ssl.SSLError as exc:
        reason = exc.reason or str(exc)
        raise TlsError(f"cannot use TLS certificate {str(cert)!r} with key {str(key)!r}: {reason} "
                       "(give the PEM certificate chain and its own private key, unencrypted)") from None
    return context
