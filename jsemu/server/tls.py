"""TLS for client connections, as nats-server does it, with the standard library's ``ssl``.

nats-server sends its INFO in the clear (``tls_required``, ``tls_verify``) and then expects
the client's TLS handshake on the same socket; a client that answers in plain text is cut
without a word. With ``handshake_first`` the handshake comes before anything, the INFO after
it. The handshake has ``timeout`` seconds (default 2); the authentication timer starts after
it, and defaults to the TLS timeout plus one second (``getDefaultAuthTimeout``). With
``verify`` a client certificate signed by ``ca_file`` is required. asyncio's ``start_tls``
upgrades the accepted socket, so the connection code stays the same on both transports.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass

__all__ = ["DEFAULT_TLS_TIMEOUT", "ClientTls", "TlsOptions", "server_context"]

#: nats-server's TLS_TIMEOUT (seconds) for a client's handshake.
DEFAULT_TLS_TIMEOUT = 2.0


@dataclass
class TlsOptions:
    """The ``tls { }`` block (or ``--tls*`` flags) of the client port."""

    cert_file: str = ""
    key_file: str = ""
    ca_file: str = ""
    verify: bool = False
    timeout: float = DEFAULT_TLS_TIMEOUT
    handshake_first: bool = False


def server_context(options: TlsOptions) -> ssl.SSLContext:
    """The server side of the handshake; ``OSError``/``ssl.SSLError`` for unusable files.
    TLS 1.2 at least, as Go's default server configuration."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(options.cert_file, options.key_file)
    if options.ca_file:
        context.load_verify_locations(cafile=options.ca_file)
    context.verify_mode = ssl.CERT_REQUIRED if options.verify else ssl.CERT_NONE
    return context


@dataclass(frozen=True)
class ClientTls:
    """What a client needs to reach a TLS server: the CA that signed the server's
    certificate and, for ``verify``, a client certificate and key (the pytest plugin's
    generated ones: ``jsemu_factory(tls=True)``)."""

    ca_file: str
    cert_file: str = ""
    key_file: str = ""

    def context(self) -> ssl.SSLContext:
        """A client ``SSLContext`` (nats-py's ``tls=``) trusting the CA, with the certificate if any."""
        context = ssl.create_default_context(cafile=self.ca_file)
        if self.cert_file:
            context.load_cert_chain(self.cert_file, self.key_file)
        return context
