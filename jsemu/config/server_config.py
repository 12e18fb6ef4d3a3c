"""The subset of nats-server's configuration file that jsemu understands.

The format is nats-server's (``conf_parser``: maps, arrays, includes). A key jsemu does not
implement is refused with its position, never ignored: a server that ignored ``authorization``
would be open while its user believes it locked. nats-server refuses keys it does not know
(``unknown field``) in the same way.

A file that cannot be read, a block left open and a value of the wrong type raise
:class:`ConfigError` with nats-server's message (``FILE:LINE:COL: ...``), so ``jsemu serve``
can fail with one line as the real server does.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..protocol.go_duration import format_duration, parse_duration
from ..server.accounts import AccountConfig, Export, Import
from ..server.auth import Auth, User
from ..server.js_limits import UNLIMITED
from ..server.nkeys import is_valid_user_key
from ..server.options import DEFAULT_LAME_DUCK_GRACE_PERIOD, ServerOptions
from ..server.permissions import Permissions, SubjectRules
from ..server.responses import DEFAULT_EXPIRES_NS, DEFAULT_MAX_MSGS, ResponsePermission
from ..server.routing import GLOBAL_ACCOUNT
from ..server.subject_mapping import MappingSpec
from ..subjects import (
    is_valid_literal_subject,
    is_valid_subject,
    subject_is_literal,
    subject_is_subset_match,
    subjects_collide,
)
from .auth_callout import CalloutConfigError, parse_auth_callout
from .cluster import ClusterConfigError, cluster_block
from .go_types import go_type
from .js_limits import JsLimitsError, parse_account_jetstream
from .mappings import MappingsConfigError, parse_mappings
from .msg_trace import MsgTraceError, parse_msg_trace
from .operator import OPERATOR_KEYS, apply_operator
from .parser import ConfigError, Positions, parse_file, parse_text
from .tls import TlsConfigError, parse_tls
from .websocket import WebSocketConfigError, check_websocket_auth, parse_websocket

__all__ = ["ConfigError", "apply_config", "load_config", "parse_config"]

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h)$")
_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_config(text: str) -> dict[str, Any]:
    """Parse into a nested dict (blocks become dicts, arrays lists)."""
    return parse_text(text)[0]


def _port(port: int) -> int:
    """A port as ``ServerOptions`` takes it: -1 a random one (0 there), 0 nats-server's default."""
    return {-1: 0, 0: 4222}.get(port, port)


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"interface conversion: interface {{}} is {go_type(value)}, not int64")
    return value


def _server_name(name: str) -> str:
    if " " in name:  # processConfigFileLine's check (only a space, not a tab)
        raise ConfigError("server name cannot contain spaces")
    return name


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"interface conversion: interface {{}} is {go_type(value)}, not string")
    return value


def _seconds(value: Any) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    m = _DURATION.match(str(value))
    if not m:
        raise ConfigError(f'error parsing ping_interval: time: invalid duration "{value}"')
    return float(m.group(1)) * _DURATION_UNITS[m.group(2)]


def _go_duration(field: str) -> Callable[[Any], float]:
    """``field: "2s"`` (a Go duration) or a number of seconds, as ``parseDuration`` (nats-server
    warns that a number should be a duration; any other type, a float too, is fatal)."""

    def seconds(value: Any) -> float:
        if isinstance(value, str):
            try:
                return parse_duration(value) / 1e9
            except ValueError as exc:
                raise ConfigError(f"error parsing {field}: {exc}") from None
        if isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        raise ConfigError(f'invalid use of field "{field}": {field} should be converted to a duration')

    return seconds


def _lame_duck_duration(value: Any) -> int:
    """``lame_duck_duration: "2m"``: a Go duration string (a number is a conversion error),
    at least 30 s; 0 never gets here."""
    text = _str(value)
    try:
        ns = parse_duration(text)
    except ValueError as exc:
        raise ConfigError(f"error parsing lame_duck_duration: {exc}") from None
    if ns < 30 * 10**9:
        raise ConfigError(f"invalid lame_duck_duration of {format_duration(ns)}, minimum is 30 seconds")
    return ns


def _lame_duck_grace_period(value: Any) -> int:
    """``lame_duck_grace_period: "10s"``, not negative; ``"0s"`` is the default (10 s)."""
    text = _str(value)
    try:
        ns = parse_duration(text)
    except ValueError as exc:
        raise ConfigError(f"error parsing lame_duck_grace_period: {exc}") from None
    if ns < 0:
        raise ConfigError("invalid lame_duck_grace_period, needs to be positive")
    return ns or DEFAULT_LAME_DUCK_GRACE_PERIOD


def _http_port(value: Any) -> int:
    """``http: 8222`` or ``http: "localhost:8222"``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    port = str(value).rsplit(":", 1)[-1]
    if not re.fullmatch(r"-?\d+", port):
        raise ConfigError(f'could not parse port "{port}"')
    return int(port)


#: ``getStorageSize``'s units of a quoted size (``"1G"``): powers of two, upper case only.
_QUOTED_UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def _go_quote(text: str) -> str:
    """Go's ``strconv.Quote`` for the text of its errors (ASCII control characters escaped)."""
    out: list[str] = []
    for c in text:
        if c in _GO_ESCAPES:
            out.append(_GO_ESCAPES[c])
        elif c < " " or c == "\x7f":
            out.append(f"\\x{ord(c):02x}")
        else:
            out.append("\\" + c if c in '"\\' else c)
    return '"' + "".join(out) + '"'


def _storage_size(key: str, value: Any) -> int:
    """``max_mem_store: 1G`` (the parser's size), a number, or a quoted ``"1G"``: nats-server's
    ``getStorageSize`` reads a string as an integer and one letter of K, M, G, T (1024 based)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if not isinstance(value, str):
        raise ConfigError(f"{key} must be int64 or string")
    if not value:
        return 0
    number, unit = value[:-1], value[-1]
    if not re.fullmatch(r"[+-]?\d+", number):
        raise ConfigError(f"{key} strconv.ParseInt: parsing {_go_quote(number)}: invalid syntax")
    if unit not in _QUOTED_UNITS:
        raise ConfigError(f"{key} sizes defined as strings must end in K, M, G, T")
    return int(number) * _QUOTED_UNITS[unit]


def _enabled(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    low = str(value).lower()
    if low in ("enabled", "enable"):
        return True
    if low in ("disabled", "disable"):
        return False
    raise ConfigError(f"Expected 'enabled' or 'disabled' for string value, got '{value}'")


# nats-server config key -> (ServerOptions attribute, conversion)
_TOP_LEVEL: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "port": ("port", lambda v: _port(_int(v))),
    "host": ("host", _str),
    "listen_host": ("host", _str),
    "net": ("host", _str),
    "server_name": ("server_name", lambda v: _server_name(_str(v))),
    "max_payload": ("max_payload", _int),
    "max_control_line": ("max_control_line", _int),
    "max_pending": ("max_pending", _int),
    "max_connections": ("max_connections", _int),
    "max_conn": ("max_connections", _int),
    "max_subscriptions": ("max_subscriptions", _int),
    "max_subs": ("max_subscriptions", _int),
    "ping_interval": ("ping_interval", _go_duration("ping_interval")),
    "ping_max": ("max_pings_out", _int),
    "write_deadline": ("write_deadline", _go_duration("write_deadline")),
    "lame_duck_duration": ("lame_duck_duration", _lame_duck_duration),
    "lame_duck_grace_period": ("lame_duck_grace_period", _lame_duck_grace_period),
    "http_port": ("http_port", _int),
    "http": ("http_port", _http_port),
    "client_advertise": ("client_advertise", _str),
}
#: jetstream block key -> (ServerOptions attribute, the name nats-server's errors use)
_STORAGE: dict[str, tuple[str, str]] = {
    "max_memory_store": ("max_memory_store", "max_mem_store"),
    "max_mem_store": ("max_memory_store", "max_mem_store"),
    "max_mem": ("max_memory_store", "max_mem_store"),
    "max_file_store": ("max_file_store", "max_file_store"),
    "max_file": ("max_file_store", "max_file_store"),
}


#: Keys nats-server knows that jsemu does not implement: refused (a server that ignored them
#: would not be the server the file describes), as nats-server refuses keys it does not know.
_NOT_YET = {
    "limits": "account limits are not supported by jsemu yet",
    "allow_non_tls": "TLS is not supported by jsemu yet",
    "ocsp": "TLS is not supported by jsemu yet",
    "https": "TLS is not supported by jsemu yet",
    "https_port": "TLS is not supported by jsemu yet",
    "permissions": "permissions are not supported by jsemu yet",
    "default_permissions": "permissions are not supported by jsemu yet",
    **{
        key: "not supported by jsemu"
        for key in [
            "gateway",
            "leafnodes",
            "leaf",
            "mqtt",
            "write_timeout",
            "logfile",
            "log_file",
            "pidfile",
            "pid_file",
            "syslog",
            "remote_syslog",
            "ports_file_dir",
            "prof_port",
            "connect_error_reports",
            "reconnect_error_reports",
            "no_header_support",
            "disable_sublist_cache",
            "max_traced_msg_len",
            "http_base_path",
            "server_tags",
            "server_metadata",
            "default_js_domain",
            "no_system_account",
        ]
    },
}
#: Keys accepted and without effect, as the matching ``jsemu serve`` flags: jsemu logs start-up only.
_LOGGING = frozenset({"debug", "trace", "trace_verbose", "logtime", "logtime_utc"})
#: What each block of a file may hold (besides the top level's ``_TOP_LEVEL`` and ``_LOGGING``).
_BLOCK_KEYS: dict[str, frozenset[str]] = {
    "jetstream": frozenset({"enabled", "store_dir", "store", "storedir", "domain", *_STORAGE}),
    "authorization": frozenset(
        {
            "user",
            "username",
            "password",
            "pass",
            "token",
            "timeout",
            "users",
            "default_permissions",
            "auth_callout",
            "auth_hook",
        }
    ),
    "user": frozenset({"user", "username", "password", "pass", "nkey", "permissions"}),
    "account": frozenset({"users", "jetstream", "exports", "imports", "msg_trace", "trace_dest", "mappings"}),
    "permissions": frozenset({"publish", "pub", "subscribe", "sub", "allow_responses"}),
    "rules": frozenset({"allow", "deny"}),
}


def _at(positions: Positions, key: tuple[str, ...], exc: ConfigError | str) -> ConfigError:
    """``FILE:LINE:COL: message`` at the key's position, as nats-server places its errors."""
    where, line, column = positions.get(key, ("", 0, 0))
    return ConfigError(f"{where}:{line}:{column}: {exc}" if where else str(exc))


def _where(positions: Positions, key: tuple[str, ...]) -> str:
    """``FILE:LINE:COL: `` of a key, for a warning in nats-server's form."""
    where, line, column = positions.get(key, ("", 0, 0))
    return f"{where}:{line}:{column}: " if where else ""


def _check_keys(block: dict[str, Any], allowed: frozenset[str], path: tuple[str, ...], pos: Positions) -> None:
    """Refuse every key the block may not hold: never accept a setting and ignore it."""
    for key in block:
        if key in allowed:
            continue
        if key in _NOT_YET:
            raise _at(pos, (*path, key), f'"{key}": {_NOT_YET[key]}')
        if (*path, key) in pos.used:
            continue  # a key only there for a $variable to read: nats-server lets it be
        raise _at(pos, (*path, key), f"unknown field {_go_quote(key)}")


def _listen(value: Any) -> tuple[str | None, int]:
    """``listen: 4222``, ``listen: ":4222"``, ``listen: "host:4222"``, ``listen: "[::1]:4222"``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return None, value
    text = _str(value)
    host, _, port = text.rpartition(":")
    if not re.fullmatch(r"-?\d+", port):
        raise ConfigError(f'could not parse port "{port}"')
    return (host.strip("[]") or None), int(port)


def _subjects(value: Any, path: tuple[str, ...], pos: Positions) -> list[str]:
    """A subject or a list of subjects."""
    items = value if isinstance(value, list) else [value]
    for index, item in enumerate(items):
        if not isinstance(item, str):
            where = (*path, str(index)) if isinstance(value, list) else path
            raise _at(pos, where, f"Subject in permissions array cannot be cast to string, got {item}")
    return items


def _rules(entries: list[str], path: tuple[str, ...], pos: Positions) -> SubjectRules:
    try:
        return SubjectRules(entries)
    except ValueError as exc:
        raise _at(pos, path, str(exc)) from None


def _permissions(value: Any, path: tuple[str, ...], pos: Positions) -> Permissions:
    """``{ publish: ..., subscribe: ... }``; each a subject, a list (the allow list) or
    ``{ allow: ..., deny: ... }``, as nats-server's ``parseUserPermissions``."""
    if not isinstance(value, dict):
        raise _at(pos, path, f"Expected permissions to be a map/struct, got {value}")
    for key in value:
        if key not in _BLOCK_KEYS["permissions"]:
            raise _at(pos, (*path, key), f'Unknown field "{key}" parsing permissions')
    perms = Permissions()
    for key, item in value.items():
        where = (*path, key)
        if key == "allow_responses":
            perms.response = _allow_responses(item, where, pos)
            continue
        publish = key in ("publish", "pub")
        if isinstance(item, dict):
            _check_keys(item, _BLOCK_KEYS["rules"], where, pos)
            allow = _rules(_subjects(item["allow"], (*where, "allow"), pos), where, pos) if "allow" in item else None
            deny = _rules(_subjects(item["deny"], (*where, "deny"), pos), where, pos) if "deny" in item else None
        else:
            allow, deny = _rules(_subjects(item, where, pos), where, pos), None
        if publish:
            perms.pub_allow, perms.pub_deny = allow, deny
        else:
            perms.sub_allow, perms.sub_deny = allow, deny
    if perms.response is not None and perms.pub_allow is None:
        perms.pub_allow = SubjectRules([])  # parseUserPermissions: responses turn off the blanket allow
    return perms


_RESPONSE_MAX = frozenset({"max", "max_msgs", "max_messages", "max_responses"})
_RESPONSE_EXPIRES = frozenset({"expires", "expiration", "ttl"})


def _allow_responses(value: Any, path: tuple[str, ...], pos: Positions) -> ResponsePermission | None:
    """``allow_responses: true`` or ``{max, expires}``, as ``parseAllowResponses`` (0 keeps a
    default, a negative value means no limit)."""
    if isinstance(value, bool):
        return ResponsePermission() if value else None
    if not isinstance(value, dict):
        raise _at(pos, path, "error parsing response permissions, expected a boolean or a map")
    max_msgs, expires_ns = DEFAULT_MAX_MSGS, DEFAULT_EXPIRES_NS
    for key, item in value.items():
        where = (*path, key)
        low = key.lower()
        if low in _RESPONSE_MAX:
            try:
                max_msgs = _int(item) or max_msgs
            except ConfigError as exc:
                raise _at(pos, where, exc) from None
        elif low in _RESPONSE_EXPIRES:
            if not isinstance(item, str):
                raise _at(pos, where, "error parsing expires, not a duration string")
            try:
                expires_ns = parse_duration(item) or expires_ns
            except ValueError as exc:
                raise _at(pos, where, f"error parsing expires: {exc}") from None
        else:
            raise _at(pos, where, f'Unknown field "{key}" parsing permissions')
    return ResponsePermission(max_msgs, expires_ns)


def _add_user(
    auth: Auth,
    entry: Any,
    where: tuple[str, ...],
    pos: Positions,
    default: Permissions | None,
    account: str,
    dup_at: tuple[str, ...],
) -> None:
    """One entry of a ``users`` array (of ``authorization`` or of an account); a duplicate
    name is placed at ``dup_at``, as nats-server places it."""
    if not isinstance(entry, dict):
        raise _at(pos, where, f"Expected user entry to be a map/struct, got {entry}")
    _check_keys(entry, _BLOCK_KEYS["user"], where, pos)
    perms = default
    if "permissions" in entry:
        perms = _permissions(entry["permissions"], (*where, "permissions"), pos)
    if "nkey" in entry:
        _nkey_user(auth, entry, perms, where, pos, account, dup_at)
        return
    try:
        name = _str(entry.get("user", entry.get("username", "")))
        user = User(name, _str(entry.get("password", entry.get("pass", ""))), perms, account)
    except ConfigError as exc:
        raise _at(pos, where, exc) from None
    if user.name in auth.users:
        raise _at(pos, dup_at, f'Duplicate user "{user.name}" detected')
    auth.users[user.name] = user


def _accounts(block: Any, pos: Positions, auth: Auth) -> list[AccountConfig]:
    """``accounts { A: { users: [...], jetstream: enabled } }``: the accounts and their users
    (added to ``auth``); what jsemu does not build (exports, imports, ...) is refused."""
    if not isinstance(block, dict):
        raise _at(pos, ("accounts",), f"Expected map entries for accounts, got {block}")
    configs = []
    for name, entry in block.items():
        path = ("accounts", name)
        if name == GLOBAL_ACCOUNT:
            raise _at(pos, path, f'"{GLOBAL_ACCOUNT}": configuring the global account is not supported by jsemu yet')
        if not isinstance(entry, dict):
            raise _at(pos, path, f'"{name}": an account must be a map (users, jetstream) in jsemu')
        _check_keys(entry, _BLOCK_KEYS["account"], path, pos)
        jetstream, limits = False, UNLIMITED
        if "jetstream" in entry:
            try:
                jetstream, limits = parse_account_jetstream(entry["jetstream"])
            except JsLimitsError as exc:
                if exc.key is None:
                    raise ConfigError(exc.message) from None  # nats-server gives no position here
                raise _at(pos, (*path, "jetstream", exc.key), exc.message) from None
        users = entry.get("users", [])
        if not isinstance(users, list):
            raise _at(pos, (*path, "users"), f"Expected users field to be an array, got {users}")
        if users and auth.token:
            raise _at(pos, (*path, "users"), "Can not have a token and accounts")
        if users and auth.user is not None:
            raise _at(pos, (*path, "users"), "Can not have a single user/pass and accounts")
        for index, user in enumerate(users):
            _add_user(auth, user, (*path, "users", str(index)), pos, None, name, (*path, "users"))
        exports = tuple(_exports(entry.get("exports", []), (*path, "exports"), pos))
        imports = tuple(_imports(entry.get("imports", []), (*path, "imports"), pos))
        if jetstream and any(i.kind == "service" and subjects_collide(i.to or i.subject, "$JS.API.>") for i in imports):
            raise _at(
                pos,
                (*path, "imports"),
                '"imports": the JetStream API imported into an account with JetStream is not supported by jsemu yet',
            )
        trace_dest, trace_sampling = "", 0
        for key in ("msg_trace", "trace_dest"):  # two names of one setting
            if key in entry:
                try:
                    trace_dest, trace_sampling = parse_msg_trace(entry[key], key, _where(pos, (*path, key)))
                except MsgTraceError as exc:
                    raise _at(pos, (*path, key, *exc.key), exc.message) from None
        mappings = _mappings(entry["mappings"], (*path, "mappings"), pos) if "mappings" in entry else ()
        configs.append(AccountConfig(name, jetstream, limits, exports, imports, trace_dest, trace_sampling, mappings))
    _check_imports(configs, pos)
    return configs


def _mappings(block: Any, path: tuple[str, ...], pos: Positions) -> tuple[MappingSpec, ...]:
    """A ``mappings`` block (``config/mappings.py``), its errors placed at their token."""
    try:
        return tuple(parse_mappings(block))
    except MappingsConfigError as exc:
        raise _at(pos, (*path, *exc.key), exc.message) from None


def _entries(value: Any, path: tuple[str, ...], pos: Positions, what: str) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise _at(pos, path, f"{what} should be an array of maps, got {value}")
    return value


def _only(entry: dict[str, Any], allowed: set[str], where: tuple[str, ...], pos: Positions, what: str) -> None:
    """Refuse what jsemu does not build in an export or import (``accounts``, ``share``, ...)."""
    for key in entry:
        if key not in allowed:
            raise _at(pos, (*where, key), f'"{key}": not supported in account {what} by jsemu yet')


def _exports(value: Any, path: tuple[str, ...], pos: Positions) -> Iterator[Export]:
    """``exports: [ {service: "svc.>"}, {stream: "feed.>"} ]``."""
    for index, entry in enumerate(_entries(value, path, pos, "Exports")):
        where = (*path, str(index))
        _only(entry, {"service", "stream"}, where, pos, "exports")
        kinds = [k for k in ("service", "stream") if k in entry]
        if len(kinds) != 1:
            raise _at(pos, where, "an export needs exactly one of service or stream")
        kind = kinds[0]
        subject = entry[kind]
        if not isinstance(subject, str) or not is_valid_subject(subject):
            raise _at(pos, (*where, kind), f'"{subject}" is not a valid subject for a {kind} export')
        yield Export(kind, subject)


def _imports(value: Any, path: tuple[str, ...], pos: Positions) -> Iterator[Import]:
    """``imports: [ {service: {account: A, subject: "svc.x"}, to: "local.x"},
    {stream: {account: A, subject: "feed.>"}, prefix: "p"} ]``."""
    for index, entry in enumerate(_entries(value, path, pos, "Imports")):
        where = (*path, str(index))
        _only(entry, {"service", "stream", "to", "prefix"}, where, pos, "imports")
        kinds = [k for k in ("service", "stream") if k in entry]
        if len(kinds) != 1:
            raise _at(pos, where, "an import needs exactly one of service or stream")
        kind = kinds[0]
        source = entry[kind]
        if not isinstance(source, dict):
            raise _at(pos, (*where, kind), f"{kind} import should be a map with account and subject, got {source}")
        _only(source, {"account", "subject"}, (*where, kind), pos, "imports")
        account, subject = source.get("account"), source.get("subject")
        if not isinstance(account, str) or not isinstance(subject, str) or not is_valid_subject(subject):
            raise _at(pos, (*where, kind), f"{kind} import needs an account and a valid subject")
        to, prefix = entry.get("to", ""), entry.get("prefix", "")
        if not isinstance(to, str) or not isinstance(prefix, str) or (prefix and kind == "service"):
            raise _at(pos, where, f"{kind} import: to and prefix must be strings (prefix for streams only)")
        # A service's wildcards carried over one for one (``$JS.API.>`` seen as ``$JS.A.API.>``)
        # are mapped; any other mapping of wildcards is not yet.
        mapped = kind == "service" and is_valid_subject(to) and _wildcards(to) == _wildcards(subject)
        if to and (prefix or not subject_is_literal(subject) or not is_valid_literal_subject(to)) and not mapped:
            raise _at(pos, (*where, "to"), '"to": a mapping of wildcard subjects is not supported by jsemu yet')
        yield Import(kind, account, subject, to, prefix)


def _wildcards(subject: str) -> tuple[int, bool]:
    """The ``*`` tokens of a subject and whether it ends in ``>``."""
    tokens = subject.split(".")
    return tokens.count("*"), tokens[-1] == ">"


def _leads_back(by_name: dict[str, AccountConfig], start: str, imp: Import, seen: set[str]) -> bool:
    """Whether following imports of ``imp``'s kind from its exporter comes back to ``start``."""
    exporter = by_name[imp.account]
    for nxt in exporter.imports:
        if nxt.kind != imp.kind or not subjects_collide(nxt.subject, imp.subject):
            continue
        if nxt.account == start:
            return True
        if nxt.account not in seen:
            seen.add(nxt.account)
            if _leads_back(by_name, start, nxt, seen):
                return True
    return False


def _check_imports(configs: list[AccountConfig], pos: Positions) -> None:
    """Each import names a defined account that exports the subject, and no chain of imports
    leads back to the importer (nats-server's words; stream imports are checked first)."""
    by_name = {c.name: c for c in configs}
    ordered = [(c, i) for kind in ("stream", "service") for c in configs for i in c.imports if i.kind == kind]
    for config, imp in ordered:
        exporter = by_name.get(imp.account)
        if exporter is None:
            raise _at(pos, ("accounts",), f'"{imp.account}" account not defined for {imp.kind} import')
        if not any(e.kind == imp.kind and subject_is_subset_match(imp.subject, e.subject) for e in exporter.exports):
            raise _at(
                pos,
                ("accounts",),
                f'Error adding {imp.kind} import "{imp.subject}": {imp.kind} import not authorized',
            )
    for config, imp in ordered:
        if _leads_back(by_name, config.name, imp, {imp.account}):
            raise _at(pos, ("accounts",), f'Error adding {imp.kind} import "{imp.subject}": import forms a cycle')


def _auth(block: dict[str, Any], pos: Positions, no_auth_user: str) -> Auth | None:
    """An ``authorization`` block (and ``no_auth_user``) as an :class:`Auth`; nats-server's errors."""
    path = ("authorization",)
    _check_keys(block, _BLOCK_KEYS["authorization"], path, pos)
    auth = Auth(no_auth_user=no_auth_user)
    try:
        auth.token = _str(block.get("token", ""))
        name = block.get("user", block.get("username"))
        if name is not None:
            auth.user = User(_str(name), _str(block.get("password", block.get("pass", ""))))
        if "timeout" in block:
            auth.timeout = _seconds(block["timeout"])
    except ConfigError as exc:
        raise _at(pos, path, exc) from None
    default = None
    if "default_permissions" in block:
        default = _permissions(block["default_permissions"], (*path, "default_permissions"), pos)
    users = block.get("users")
    if users is not None:
        if not isinstance(users, list):
            raise _at(pos, (*path, "users"), f"Expected users field to be an array, got {users}")
        for index, entry in enumerate(users):
            _add_user(auth, entry, (*path, "users", str(index)), pos, default, GLOBAL_ACCOUNT, path)
        if auth.token:
            raise _at(pos, path, "Can not have a token and a users array")
        if auth.user is not None:
            raise _at(pos, path, "Can not have a single user/pass and a users array")
    for key in ("auth_callout", "auth_hook"):
        if key in block:
            try:
                auth.callout = parse_auth_callout(block[key])
            except CalloutConfigError as exc:
                raise _at(pos, (*path, key, exc.key) if exc.key else (*path, key), exc.message) from None
    if not (auth.token or auth.user or auth.users or auth.nkeys or no_auth_user or auth.callout):
        return None
    return auth


def _nkey_user(
    auth: Auth,
    entry: dict[str, Any],
    perms: Permissions | None,
    where: tuple[str, ...],
    pos: Positions,
    account: str,
    dup_at: tuple[str, ...],
) -> None:
    """A ``{nkey: U..., permissions: ...}`` entry, checked as ``parseUsers`` does. Its errors
    sit at the entry's last key (Go reports the last key of its map walk)."""
    last = (*where, list(entry)[-1])
    try:
        key = _str(entry["nkey"])
    except ConfigError as exc:
        raise _at(pos, (*where, "nkey"), exc) from None
    if any(k in entry for k in ("user", "username", "password", "pass")):
        raise _at(pos, last, "Nkey users do not take usernames or passwords")
    if not is_valid_user_key(key):
        raise _at(pos, last, "Not a valid public nkey for a user")
    if key in auth.nkeys:
        raise _at(pos, dup_at, f'Duplicate nkey "{key}" detected')
    auth.nkeys[key] = User(key, "", perms, account)


def apply_config(
    conf: dict[str, Any], options: ServerOptions, positions: Positions | None = None, where: str = ""
) -> ServerOptions:
    """Set ``options`` from a parsed file; ``positions`` place errors. A key jsemu does not
    implement is refused (:class:`ConfigError`), never ignored."""
    pos = positions if positions is not None else Positions()
    _check_keys(conf, _TOP_LEVEL_KEYS, (), pos)
    if "tls" in conf:
        try:
            options.tls = parse_tls(conf["tls"])
        except TlsConfigError as exc:
            raise _at(pos, ("tls", exc.key) if exc.key else ("tls",), exc.message) from None
    for key in ("websocket", "ws"):
        if key in conf:
            try:
                options.websocket = parse_websocket(conf[key])
            except WebSocketConfigError as exc:
                if exc.key is None:
                    raise ConfigError(exc.message) from None
                inner = exc.key if isinstance(exc.key, tuple) else (exc.key,) if exc.key else ()
                raise _at(pos, (key, *inner), exc.message) from None
    for key, value in conf.items():
        target = _TOP_LEVEL.get(key)
        if target is not None:
            try:
                setattr(options, target[0], target[1](value))
            except ConfigError as exc:
                raise _at(pos, (key,), exc) from None
    if "listen" in conf:
        try:
            host, port = _listen(conf["listen"])
        except ConfigError as exc:
            raise _at(pos, ("listen",), exc) from None
        if host is not None:
            options.host = host
        options.port = _port(port)
    js = conf.get("jetstream")
    if isinstance(js, dict):
        _check_keys(js, _BLOCK_KEYS["jetstream"], ("jetstream",), pos)
        try:
            options.jetstream = _enabled(js.get("enabled", True))
        except ConfigError as exc:
            raise _at(pos, ("jetstream", "enabled"), exc) from None
        for key in ("store_dir", "store", "storedir"):
            if key in js:
                options.store_dir = _store_dir(options, js[key], pos, ("jetstream", key), ("jetstream",))
        if "domain" in js:
            options.domain = str(js["domain"])
        for key, (attr, go_name) in _STORAGE.items():
            if key in js:
                try:
                    setattr(options, attr, _storage_size(go_name, js[key]))
                except ConfigError as exc:
                    raise _at(pos, ("jetstream", key), exc) from None
    elif js is not None:
        try:
            if not isinstance(js, (bool, str)):  # parseJetStream's last case
                raise ConfigError(f"Expected map, bool or string to define JetStream, got {go_type(js)}")
            options.jetstream = _enabled(js)
        except ConfigError as exc:
            raise _at(pos, ("jetstream",), exc) from None
    for key in ("store_dir", "storedir"):
        if key in conf:
            options.store_dir = _store_dir(options, conf[key], pos, (key,), (key,))
    block = conf.get("authorization")
    no_auth_user = conf.get("no_auth_user", "")
    if not isinstance(no_auth_user, str):
        raise _at(
            pos,
            ("no_auth_user",),
            ConfigError(f"interface conversion: interface {{}} is {go_type(no_auth_user)}, not string"),
        )
    if block is not None:
        if not isinstance(block, dict):
            raise _at(pos, ("authorization",), f"Expected authorization to be a map/struct, got {block}")
        options.auth = _auth(block, pos, no_auth_user)
    elif no_auth_user:
        options.auth = Auth(no_auth_user=no_auth_user)
    if "mappings" in conf:
        options.mappings = _mappings(conf["mappings"], ("mappings",), pos)
    if "accounts" in conf:
        auth = options.auth or Auth(no_auth_user=no_auth_user)
        options.accounts = _accounts(conf["accounts"], pos, auth)
        if auth.users or auth.nkeys or auth.token or auth.user is not None or auth.no_auth_user:
            options.auth = auth
    callout = options.auth.callout if options.auth is not None else None
    if callout is not None:
        known = {config.name for config in options.accounts}
        for name in callout.allowed_accounts:
            if name not in known:
                raise ConfigError(f'auth_callout allowed account "{name}" not found in configured accounts')
    apply_operator(conf, options, pos)
    _system_account(conf, options, pos)
    if options.websocket is not None:
        try:
            trusted = any(key in conf for key in ("operator", "operators", "root", "roots", "trusted", "trusted_keys"))
            check_websocket_auth(options.websocket, options.auth, trusted)
        except WebSocketConfigError as exc:
            raise ConfigError(exc.message) from None
    if "cluster" in conf:
        try:
            options.cluster = cluster_block(conf["cluster"])
            options.cluster.listen_set = True
        except ClusterConfigError as exc:
            raise _at(pos, ("cluster", *exc.key), str(exc)) from None
    return options


def _store_dir(options: ServerOptions, value: Any, pos: Positions, key: tuple[str, ...], block: tuple[str, ...]) -> str:
    """A ``store_dir`` of the file (top level or in ``jetstream``): nats-server reads flags
    before the file, so one given by ``-sd`` (or the other place of the file) is a duplicate.
    A value of the wrong type is placed at the block, as nats-server places it."""
    if options.store_dir:
        raise _at(pos, key, "Duplicate 'store_dir' configuration")
    try:
        return _str(value)
    except ConfigError as exc:
        raise _at(pos, block, exc) from None


#: nats-server's two spellings of the system account key.
_SYSTEM_ACCOUNT = ("system_account", "system")
#: Every key the top level may hold (the reference page of the configuration lists them).
_TOP_LEVEL_KEYS = frozenset(
    {
        *_TOP_LEVEL,
        *_LOGGING,
        *_SYSTEM_ACCOUNT,
        *OPERATOR_KEYS,
        "listen",
        "jetstream",
        "authorization",
        "no_auth_user",
        "mappings",
        "tls",
        "accounts",
        "store_dir",
        "storedir",
        "cluster",
        "websocket",
        "ws",
    }
)


def _system_account(conf: dict[str, Any], options: ServerOptions, pos: Positions) -> None:
    """``system_account: SYS``: an account of the file (nats-server's checks and words;
    ``$SYS`` when not given). JetStream on it is refused at start (``ServerOptions``)."""
    for key in _SYSTEM_ACCOUNT:
        if key not in conf:
            continue
        name = conf[key]
        if not isinstance(name, str):
            raise _at(pos, (key,), "system account name must be a string")
        account = next((a for a in options.accounts if a.name == name), None)
        if account is None:
            raise ConfigError("error resolving system account: account missing")
        options.system_account = name


def load_config(path: str | Path, options: ServerOptions) -> ServerOptions:
    """Read ``path`` (and its includes) into ``options``; :class:`ConfigError` (nats-server's wording)."""
    conf, positions = parse_file(path)
    return apply_config(conf, options, positions, str(path))
