"""Test certificates for TLS servers made by the pytest plugin, generated with ``trustme``
(never checked-in keys): a CA, a server certificate for 127.0.0.1/localhost and a client
certificate, written as PEM files to a directory the caller owns."""

from __future__ import annotations

from pathlib import Path

from ..server.tls import ClientTls, TlsOptions

__all__ = ["generate"]


def generate(directory: Path, verify: bool = False, handshake_first: bool = False) -> tuple[TlsOptions, ClientTls]:
    """Server options and the client's side for fresh certificates in ``directory``."""
    try:
        import trustme
    except ImportError:  # pragma: no cover - the message is the point
        raise RuntimeError("jsemu_factory(tls=True) needs trustme: pip install 'jsemu[tls]'") from None
    ca = trustme.CA()
    server = ca.issue_cert("127.0.0.1", "localhost", "::1")
    client = ca.issue_cert("jsemu-test-client@example.com")
    files = {name: str(directory / f"{name}.pem") for name in ("ca", "cert", "key", "client-cert", "client-key")}
    ca.cert_pem.write_to_path(files["ca"])
    server.cert_chain_pems[0].write_to_path(files["cert"])
    server.private_key_pem.write_to_path(files["key"])
    client.cert_chain_pems[0].write_to_path(files["client-cert"])
    client.private_key_pem.write_to_path(files["client-key"])
    options = TlsOptions(files["cert"], files["key"], files["ca"], verify=verify, handshake_first=handshake_first)
    return options, ClientTls(files["ca"], files["client-cert"], files["client-key"])
