"""A TLS client's connection state as nats-server describes it (``jwt.ClientTLS``).

The auth callout's request (``server/auth_callout.py``) carries, for a client that came in
over TLS, ``client_tls``: ``version`` (``"1.3"``: Go's ``tlsVersion``), ``cipher`` (Go's
``tls.CipherSuiteName``: the IANA name, ``TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`` where
OpenSSL says ``ECDHE-RSA-AES128-GCM-SHA256``) and, when the server verified a client
certificate (``verify``), ``verified_chains``: one chain, the client's certificate then its
issuers up to the CA, each PEM-encoded. Without ``verify`` the server asks for no certificate,
so nats-server's fallback (``certs``: the unverified peer certificates) stays empty here too.

Python's ``ssl`` (before 3.13) hands over the peer's leaf certificate only, so the chain is
rebuilt from the ``ca_file`` the handshake verified it against: each certificate's issuer is
the CA certificate whose subject is its issuer and whose key signed it.
"""

from __future__ import annotations

import ssl
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.serialization import Encoding

__all__ = ["client_tls"]

#: OpenSSL's names of the TLS 1.2 suites Go offers -> Go's (IANA) names. TLS 1.3 suites have
#: the same name in both.
_GO_CIPHER_NAMES = {
    "ECDHE-ECDSA-AES128-GCM-SHA256": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    "ECDHE-ECDSA-AES256-GCM-SHA384": "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
    "ECDHE-RSA-AES128-GCM-SHA256": "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    "ECDHE-RSA-AES256-GCM-SHA384": "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    "ECDHE-ECDSA-CHACHA20-POLY1305": "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
    "ECDHE-RSA-CHACHA20-POLY1305": "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
    "ECDHE-ECDSA-AES128-SHA": "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
    "ECDHE-ECDSA-AES256-SHA": "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
    "ECDHE-RSA-AES128-SHA": "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
    "ECDHE-RSA-AES256-SHA": "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
    "AES128-GCM-SHA256": "TLS_RSA_WITH_AES_128_GCM_SHA256",
    "AES256-GCM-SHA384": "TLS_RSA_WITH_AES_256_GCM_SHA384",
}
_VERSIONS = {"TLSv1": "1.0", "TLSv1.1": "1.1", "TLSv1.2": "1.2", "TLSv1.3": "1.3"}


def client_tls(tls: ssl.SSLObject | None, ca_file: str) -> dict[str, Any] | None:
    """``client_tls`` of a connection's TLS state (None: not a TLS connection)."""
    if tls is None:
        return None
    out: dict[str, Any] = {}
    version = tls.version()
    if version:
        out["version"] = _VERSIONS.get(version, version)
    cipher = tls.cipher()
    if cipher:
        out["cipher"] = _GO_CIPHER_NAMES.get(cipher[0], cipher[0])
    leaf = tls.getpeercert(binary_form=True)
    if leaf and ca_file:
        out["verified_chains"] = [[ssl.DER_cert_to_PEM_cert(der) for der in _chain(leaf, ca_file)]]
    return out


def _chain(leaf: bytes, ca_file: str) -> list[bytes]:
    """The DER certificates from ``leaf`` up to a self-signed CA of ``ca_file``."""
    chain = [x509.load_der_x509_certificate(leaf)]
    authorities = _authorities(ca_file)
    while chain[-1].issuer != chain[-1].subject and len(chain) <= len(authorities):
        issuer = next((ca for ca in authorities if _issued(chain[-1], ca)), None)
        if issuer is None:
            break
        chain.append(issuer)
    return [cert.public_bytes(Encoding.DER) for cert in chain]


def _issued(cert: x509.Certificate, ca: x509.Certificate) -> bool:
    try:
        cert.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def _authorities(ca_file: str) -> tuple[x509.Certificate, ...]:
    """The certificates of ``ca_file``, read again each time (a reload may change it; a
    callout request is rare enough)."""
    try:
        with open(ca_file, "rb") as f:
            return tuple(x509.load_pem_x509_certificates(f.read()))
    except (OSError, ValueError):
        return ()
