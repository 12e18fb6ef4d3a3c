"""The ``tls { }`` block and the ``--tls*`` flags, checked as nats-server's ``parseTLS`` and
``GenTLSConfig`` check them (same texts), into :class:`~jsemu.server.tls.TlsOptions`.

Keys nats-server knows and jsemu does not implement (cipher suites, pinned certificates,
OCSP, ...) are refused, never ignored. The files are opened here, so a missing or
mismatched certificate fails at start with one line, as it does for nats-server.
"""

from __future__ import annotations

import os
import ssl
from typing import Any

from ..protocol.go_duration import parse_duration
from ..server.tls import TlsOptions, server_context

__all__ = ["TlsConfigError", "check_files", "parse_tls"]

_NOT_YET = frozenset(
    {
        "verify_and_map",
        "verify_cert_and_check_known_urls",
        "cipher_suites",
        "curve_preferences",
        "insecure",
        "pinned_certs",
        "cert_store",
        "cert_match_by",
        "cert_match",
        "cert_match_skip_invalid",
        "ca_certs_match",
        "min_version",
        "ocsp_peer",
        "certs",
        "connection_rate_limit",
        "first",
        "immediate",
    }
)


class TlsConfigError(Exception):
    """``message`` at ``key`` inside the block (``None``: at the block itself)."""

    def __init__(self, key: str | None, message: str) -> None:
        super().__init__(message)
        self.key = key
        self.message = message


def _type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    return "string" if isinstance(value, str) else "[]interface {}"


def parse_tls(block: Any) -> TlsOptions:
    """A ``tls`` value into options whose files load; :class:`TlsConfigError` otherwise."""
    if not isinstance(block, dict):
        raise TlsConfigError(
            None, f"interface conversion: interface {{}} is {_type(block)}, not map[string]interface {{}}"
        )
    options = TlsOptions()
    for key, value in block.items():
        low = key.lower()
        if low in ("cert_file", "key_file", "ca_file"):
            if not isinstance(value, str):
                raise TlsConfigError(key, f"error parsing tls config, expected '{low}' to be filename")
            setattr(options, low, value)
        elif low == "verify":
            if not isinstance(value, bool):
                raise TlsConfigError(key, "error parsing tls config, expected 'verify' to be a boolean")
            options.verify = value
        elif low == "timeout":
            options.timeout = _timeout(key, value)
        elif low == "handshake_first":
            if not isinstance(value, bool):
                raise TlsConfigError(key, f'"{key}": only true or false is supported by jsemu (not a fallback delay)')
            options.handshake_first = value
        elif low in _NOT_YET:
            raise TlsConfigError(key, f'"{key}": this TLS setting is not supported by jsemu yet')
        else:
            raise TlsConfigError(key, f'error parsing tls config, unknown field "{key}"')
    if not options.cert_file and not options.key_file:
        raise TlsConfigError(None, "jsemu needs cert_file and key_file in a tls block")
    if not options.cert_file:
        raise TlsConfigError(None, "missing 'cert_file' in TLS configuration")
    if not options.key_file:
        raise TlsConfigError(None, "missing 'key_file' in TLS configuration")
    error = check_files(options)
    if error is not None:
        raise TlsConfigError(None, error)
    return options


def _timeout(key: str, value: Any) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return parse_duration(value) / 1e9
        except ValueError as exc:
            raise TlsConfigError(key, f"error parsing tls config, 'timeout' {exc}") from None
    raise TlsConfigError(key, "error parsing tls config, 'timeout' wrong type")


def check_files(options: TlsOptions) -> str | None:
    """nats-server's text for files that cannot serve (``None``: they can)."""
    for path in (options.cert_file, options.key_file):
        if not os.path.isfile(path):
            return f"error parsing X509 certificate/key pair: open {path}: no such file or directory"
    if options.ca_file and not os.path.isfile(options.ca_file):
        return f"open {options.ca_file}: no such file or directory"
    try:
        server_context(options)
    except (ssl.SSLError, OSError) as exc:
        reason = getattr(exc, "reason", None) or str(exc)
        if "KEY_VALUES_MISMATCH" in str(reason).upper():
            return "error parsing X509 certificate/key pair: tls: private key does not match public key"
        return f"error parsing X509 certificate/key pair: {reason}"
    return None
