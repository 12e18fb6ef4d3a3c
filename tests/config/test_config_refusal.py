"""A configuration key jsemu does not implement is refused at start, never ignored: a server
that ignored ``authorization`` would be open while its user believes it locked. Keys nats-server
does not know either fail with its very line (``FILE:LINE:COL: unknown field "..."``); keys it
knows and jsemu does not (TLS, account limits, ...) fail with one line naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_cli_errors import _assert_one_line, _jsemu, _real

UNKNOWN = {
    "top-level": "port: 4222\nfoo_bar: 1\n",
    "in-jetstream": "jetstream { bogus: 1 }\n",
    "in-authorization": "authorization {\n  user: a\n  password: b\n  bogus: 1\n}\n",
    "in-a-user": "authorization { users: [ {user: a, password: b, bogus: 2} ] }\n",
    "after-include": 'include "other.conf"\nlisten: "127.0.0.1:-1"\n  wat: 3\n',
    "missing-include": 'include "./missing.conf"\n',
    "token-and-users": "authorization { token: t, users: [{user:a,password:b}] }\n",
    "user-and-users": "authorization { users: [ {user: a, password: b} ]\n user: c\n password: d }\n",
    "duplicate-user": "authorization { users: [ {user: a, password: b}, {user: a, password: c} ] }\n",
    "no-auth-user-alone": "no_auth_user: a\n",
    "no-auth-user-unknown": "no_auth_user: x\nauthorization { users: [ {user: a, password: b} ] }\n",
    "account-duplicate-user": "accounts {\n  A: { users: [ {user: a, password: b}, {user: a} ] }\n}\n",
    "service-import-not-exported": (
        "accounts {\n  A: {}\n  B: { imports: [ {service: {account: A, subject: x}} ] }\n}\n"
    ),
    "stream-import-not-exported": (
        "accounts {\n  A: { exports: [ {service: x} ] }\n  B: { imports: [ {stream: {account: A, subject: x}} ] }\n}\n"
    ),
    "stream-import-cycle": (
        "accounts {\n  A: { exports: [ {stream: x.>} ], imports: [ {stream: {account: B, subject: x.>}} ] }\n"
        "  B: { exports: [ {stream: x.>} ], imports: [ {stream: {account: A, subject: x.>}} ] }\n}\n"
    ),
    "service-import-cycle": (
        "accounts {\n  A: { exports: [ {service: s} ], imports: [ {service: {account: B, subject: s}} ] }\n"
        "  B: { exports: [ {service: s} ], imports: [ {service: {account: A, subject: s}} ] }\n}\n"
    ),
    "import-from-undefined-account": "accounts {\n  B: { imports: [ {stream: {account: Z, subject: x}} ] }\n}\n",
}


@pytest.mark.parametrize("name", sorted(UNKNOWN))
def test_refused_as_nats_server_refuses(name: str, tmp_path: Path) -> None:
    (tmp_path / "other.conf").write_text("server_name: inc\n")
    conf = tmp_path / "server.conf"
    conf.write_text(UNKNOWN[name])
    real, emu = _real("-c", str(conf)), _jsemu("-c", str(conf))
    assert (real.returncode, emu.returncode) == (1, 1), real.stderr
    assert _assert_one_line(emu) == real.stderr.strip().splitlines()[0]


@pytest.mark.parametrize(
    ("auth", "what"), [("token: t", "a token"), ("user: u, password: p", "a single user/pass")], ids=["token", "user"]
)
def test_account_users_with_token_or_single_user(auth: str, what: str, tmp_path: Path) -> None:
    """nats-server refuses either at the authorization block (``... and a users array``) or at
    the account's users (``... and accounts``), depending on Go's map order: jsemu says one."""
    conf = tmp_path / "server.conf"
    conf.write_text(f"authorization {{ {auth} }}\naccounts {{ A: {{ users: [ {{user: a, password: b}} ] }} }}\n")
    accepted = {
        f"nats-server: {conf}:1:0: Can not have {what} and a users array",
        f"nats-server: {conf}:2:17: Can not have {what} and accounts",
    }
    real, emu = _real("-c", str(conf)), _jsemu("-c", str(conf))
    assert (real.returncode, emu.returncode) == (1, 1), real.stderr
    assert real.stderr.strip().splitlines()[0] in accepted
    assert _assert_one_line(emu) in accepted


NOT_YET = {
    "tls-cipher-suites": (
        "tls {\n  cert_file: a\n  cipher_suites: [x]\n}\n",
        3,
        3,
        '"cipher_suites": this TLS setting is not supported by jsemu yet',
    ),
    "restricted-export": (
        "accounts {\n  A: {\n    exports: [\n      {stream: a.>, accounts: [B]}\n    ]\n  }\n  B: {}\n}\n",
        4,
        21,
        '"accounts": not supported in account exports by jsemu yet',
    ),
    "js-api-import-into-jetstream-account": (
        (
            'accounts {\n  A: { exports: [ {service: "$JS.API.>"} ] }\n'
            '  B: {\n    jetstream: enabled\n    imports: [ {service: {account: A, subject: "$JS.API.>"}} ]\n  }\n}\n'
        ),
        5,
        5,
        "the JetStream API imported into an account with JetStream is not supported by jsemu yet",
    ),
    "single-user-permissions": (
        "authorization {\n  user: a\n  permissions: { publish: x }\n}\n",
        3,
        3,
        "permissions are not supported",
    ),
    "cluster-pool_size": (
        "port: 4222\ncluster {\n  port: 6222\n  pool_size: 3\n}\n",
        4,
        3,
        '"pool_size": not supported by jsemu',
    ),
    "write_timeout": ('port: 4222\nwrite_timeout: "retry"\n', 2, 1, '"write_timeout": not supported by jsemu'),
}


@pytest.mark.parametrize("name", sorted(NOT_YET))
def test_not_yet_supported_is_refused_with_its_position(name: str, tmp_path: Path) -> None:
    text, line, column, words = NOT_YET[name]
    conf = tmp_path / "server.conf"
    conf.write_text(text)
    emu = _jsemu("-c", str(conf))
    assert emu.returncode == 1
    message = _assert_one_line(emu)
    assert message.startswith(f"nats-server: {conf}:{line}:{column}: "), message
    assert words in message


def test_accepted_forms_start(tmp_path: Path) -> None:
    """What jsemu implements is taken, arrays and inline maps included (items separated by commas or
    new lines: a semicolon between array items is a parse error in nats-server)."""
    from jsemu.config.server_config import load_config
    from jsemu.server.options import ServerOptions

    (tmp_path / "inc.conf").write_text("server_name: from-include # comment\n")
    conf = tmp_path / "server.conf"
    conf.write_text(
        "listen: 127.0.0.1:14444\ninclude inc.conf\ndebug: true\n"
        "authorization {\n  timeout: 1.5\n  users = [\n    {user: a, password: b}, {user: 'c d', password: \"e,f\"}\n  ]\n}\n"
    )
    options = load_config(conf, ServerOptions())
    assert (options.host, options.port, options.server_name) == ("127.0.0.1", 14444, "from-include")
    assert options.auth is not None and options.auth.timeout == 1.5
    assert {u.name: u.password for u in options.auth.users.values()} == {"a": "b", "c d": "e,f"}


@pytest.mark.parametrize(
    ("value", "seconds"),
    [('"2s"', 2.0), ('"1m30s"', 90.0), ('"250ms"', 0.25), ("3", 3.0), ('"-1s"', -1.0), ('"0s"', 0.0), ("0", 0.0)],
)
def test_write_deadline_forms(value: str, seconds: float) -> None:
    """A Go duration or a number of seconds (nats-server warns it should be a duration); 0 is
    the default, 10 s; a negative deadline is kept (every write fails). Bad values fail as
    nats-server fails: ``test_cli_errors.CONFIGS``."""
    from jsemu.config.server_config import apply_config, parse_config
    from jsemu.server.options import ServerOptions

    options = apply_config(parse_config(f"write_deadline: {value}\n"), ServerOptions())
    assert options.write_deadline == seconds
    assert options.write_deadline_ns() == (round(seconds * 1e9) or 10_000_000_000)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ('"abc"', 'error parsing write_deadline: time: invalid duration "abc"'),
        ('"5"', 'error parsing write_deadline: time: missing unit in duration "5"'),
        ("1.5", 'invalid use of field "write_deadline": write_deadline should be converted to a duration'),
    ],
)
def test_write_deadline_bad_values(value: str, message: str) -> None:
    """nats-server's first line for each (``test_cli_errors`` compares them with the binary's)."""
    from jsemu.config.server_config import ConfigError, apply_config, parse_config
    from jsemu.server.options import ServerOptions

    with pytest.raises(ConfigError) as caught:
        apply_config(parse_config(f"write_deadline: {value}\n"), ServerOptions())
    assert str(caught.value) == message
