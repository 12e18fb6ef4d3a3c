"""Operator mode in the configuration file, side by side with nats-server 2.15.1: the same
one-line refusals at start (a bad operator JWT, a missing file, a bad preloaded account, an
untrusted or mismatched system account, accounts next to an operator, a bad trusted key, an
unknown resolver), jsemu's one line for the resolvers it does not build, and the forms both
accept (an inline JWT, a file, ``nsc``'s armoured file, ``trusted`` keys)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jsemu.config.server_config import ConfigError, load_config
from jsemu.protocol.jwt import PREFIX_ACCOUNT, PREFIX_OPERATOR, KeyPair
from jsemu.protocol.jwt.mint import account_jwt, operator_jwt
from jsemu.server.operator_auth import OperatorAuth
from jsemu.server.options import ServerOptions
from jsemu.testing.operator import OperatorSetup

from .test_cli_errors import _assert_one_line, _jsemu, _real

OP = KeyPair.create(PREFIX_OPERATOR)
OTHER = KeyPair.create(PREFIX_OPERATOR)
SYS, ACC = KeyPair.create(PREFIX_ACCOUNT), KeyPair.create(PREFIX_ACCOUNT)
OP_JWT = operator_jwt(OP, system_account=SYS.public_key)
SYS_JWT, ACC_JWT = account_jwt(SYS.public_key, OP, "SYS"), account_jwt(ACC.public_key, OP, "A")
HEAD = f"port: -1\noperator: {OP_JWT}\nsystem_account: {SYS.public_key}\nresolver: MEMORY\n"

REFUSED = {
    "bad-operator-jwt": "port: -1\noperator: eyJhbGciOi.bad.x\nresolver: MEMORY\n",
    "operator-file-missing": "port: -1\noperator: /nonexistent/op.jwt\nresolver: MEMORY\n",
    "bad-preloaded-jwt": HEAD + f"resolver_preload: {{ {ACC.public_key}: abc }}\n",
    "untrusted-system-account": HEAD
    + f"resolver_preload: {{ {SYS.public_key}: {account_jwt(SYS.public_key, OTHER)} }}\n",
    "mismatched-system-account": HEAD + f"resolver_preload: {{ {SYS.public_key}: {ACC_JWT} }}\n",
    "accounts-next-to-operator": HEAD
    + f"resolver_preload: {{ {SYS.public_key}: {SYS_JWT} }}\naccounts {{ X: {{}} }}\n",
    "bad-trusted-key": "port: -1\ntrusted: XYZ\n",
    "unknown-resolver": f"port: -1\noperator: {OP_JWT}\nresolver: FOO\n",
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_as_nats_server(name: str, tmp_path: Path) -> None:
    conf = tmp_path / "server.conf"
    conf.write_text(REFUSED[name])
    real, emu = _real("-c", str(conf)), _jsemu("-c", str(conf))
    assert (real.returncode, emu.returncode) == (1, 1), real.stderr
    assert _assert_one_line(emu) == real.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("resolver", "words"),
    [
        ('URL("http://localhost:9/jwt/v1/accounts/")', "URL resolver"),
    ],
)
def test_resolvers_not_built_are_refused_in_one_line(resolver: str, words: str, tmp_path: Path) -> None:
    conf = tmp_path / "server.conf"
    conf.write_text(f"port: -1\noperator: {OP_JWT}\nresolver: {resolver}\n")
    emu = _jsemu("-c", str(conf))
    assert emu.returncode == 1 and words in _assert_one_line(emu) and "not supported by jsemu" in emu.stderr


def _load(text: str, tmp_path: Path) -> ServerOptions:
    conf = tmp_path / "server.conf"
    conf.write_text(text)
    return load_config(conf, ServerOptions())


def test_operator_forms(tmp_path: Path) -> None:
    setup = OperatorSetup()
    setup.account("A", jetstream={"streams": 3})
    inline = _load(setup.config_text(), tmp_path)
    (tmp_path / "op.jwt").write_text(setup.operator_jwt)
    armoured = tmp_path / "op-armoured.jwt"
    armoured.write_text(f"-----BEGIN NATS OPERATOR JWT-----\n{setup.operator_jwt}\n------END NATS OPERATOR JWT------\n")
    for path in (tmp_path / "op.jwt", armoured):
        text = setup.config_text().replace(f"operator: {setup.operator_jwt}", f"operator: {path}")
        options = _load(text, tmp_path)
        assert isinstance(options.auth, OperatorAuth) and options.auth.trusted == inline.auth.trusted  # type: ignore[union-attr]
    a = setup.accounts["A"].public_key
    assert inline.system_account == setup.system.public_key
    assert {c.name: (c.jetstream, c.limits.max_streams) for c in inline.accounts} == {
        setup.system.public_key: (False, -1),
        a: (True, 3),
    }


def test_trusted_keys_and_untrusted_accounts(tmp_path: Path) -> None:
    text = f"trusted: [{OP.public_key}]\nresolver: MEMORY\nresolver_preload: {{ {ACC.public_key}: {ACC_JWT} }}\n"
    options = _load(text, tmp_path)
    assert isinstance(options.auth, OperatorAuth) and set(options.auth.accounts) == {ACC.public_key}
    stranger = account_jwt(ACC.public_key, OTHER)
    options = _load(text.replace(ACC_JWT, stranger), tmp_path)
    assert isinstance(options.auth, OperatorAuth) and options.auth.accounts == {}  # not trusted: not there


def test_operator_without_resolver_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="without a resolver"):
        _load(f"operator: {OP_JWT}\n", tmp_path)


def test_preloaded_account_with_validation_issues_is_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """nats-server 2.15.1 logs a preloaded account JWT that does not validate at start (and
    refuses its users later): ``[WRN] Account [<key>] has validation issues:``, then each issue,
    the imports limit twice (nats-io/jwt checks it twice)."""
    setup = OperatorSetup()
    imports = [{"subject": s, "account": setup.system.public_key, "type": "stream"} for s in ("x", "y")]
    limits = {"subs": -1, "data": -1, "payload": -1, "imports": 1, "exports": -1, "wildcards": True, "conn": -1}
    bad = setup.account("BAD", imports=imports, extra={"limits": limits})
    with caplog.at_level("WARNING", logger="jsemu.config"):
        _load(setup.config_text(), tmp_path)
    more = "  - the account contains more imports than allowed by the operator"
    assert caplog.messages == [f"Account [{bad.public_key}] has validation issues:", more, more]
