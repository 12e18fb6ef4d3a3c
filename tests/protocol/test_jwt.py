"""The JWT codec and nkey pairs (``jsemu/protocol/jwt``): round trips, tampering, and keys the
PyPI ``nkeys`` package (Go's encoding) reads the same. That nats-server accepts what is minted
here is proven by ``tests/server/test_operator_auth.py`` (the same JWTs on both servers)."""

from __future__ import annotations

import base64
import json

import nkeys
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jsemu.protocol.jwt import PREFIX_ACCOUNT, PREFIX_OPERATOR, PREFIX_USER, JwtError, KeyPair, decode, encode
from jsemu.protocol.jwt.keys import KeyError_, decode_public, verify
from jsemu.protocol.jwt.mint import account_jwt, creds, operator_jwt, user_jwt

SIGNER = KeyPair.create(PREFIX_ACCOUNT)
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(deadline=None)  # Ed25519 per example: slow on a loaded machine
@given(claims=st.dictionaries(st.text(max_size=10), _json, max_size=6), name=st.text(max_size=30))
def test_encode_decode_round_trip(claims: dict[str, object], name: str) -> None:
    body = {**claims, "name": name, "sub": "X"}
    token = decode(encode(body, SIGNER))
    for key, value in body.items():
        if key not in ("iss", "jti", "iat", "nats") or (key == "nats" and not isinstance(value, dict)):
            assert token.claims[key] == value
    assert token.claims["iss"] == SIGNER.public_key
    assert len(token.claims["jti"]) == 52  # base32 of 32 bytes, no padding


@settings(deadline=None)
@given(position=st.integers(0, 10_000), replacement=st.sampled_from("AQgw_-"))
def test_any_changed_character_fails(position: int, replacement: str) -> None:
    text = user_jwt(KeyPair.create(PREFIX_USER).public_key, SIGNER)
    i = position % len(text)
    if text[i] == "." or text[i] == replacement:
        return
    changed = text[:i] + replacement + text[i + 1 :]
    try:
        decode(changed)
    except JwtError:
        return
    # Only the last character's unused low bits may change without changing the bytes.
    assert i == len(text) - 1


@pytest.mark.parametrize(
    "text",
    ["", "a.b", "a.b.c.d", "!!.!!.!!", "e30.e30.AAAA", "eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9.e30.AAAA"],
)
def test_malformed_tokens_are_refused(text: str) -> None:
    with pytest.raises(JwtError):
        decode(text)


def test_wrong_algorithm_refused_even_when_signed() -> None:
    header = base64.urlsafe_b64encode(json.dumps({"typ": "JWT", "alg": "HS256"}).encode()).rstrip(b"=").decode()
    body = base64.urlsafe_b64encode(json.dumps({"iss": SIGNER.public_key}).encode()).rstrip(b"=").decode()
    sig = base64.urlsafe_b64encode(SIGNER.sign(f"{header}.{body}".encode())).rstrip(b"=").decode()
    with pytest.raises(JwtError):
        decode(f"{header}.{body}.{sig}")


@pytest.mark.parametrize("role", [PREFIX_OPERATOR, PREFIX_ACCOUNT, PREFIX_USER])
def test_keys_match_the_nkeys_package(role: int) -> None:
    pair = KeyPair.create(role)
    theirs = nkeys.from_seed(bytearray(pair.seed.encode()))
    assert theirs.public_key.decode() == pair.public_key
    assert KeyPair.from_seed(pair.seed) == pair
    assert theirs.verify(b"nonce", pair.sign(b"nonce"))
    assert verify(pair.public_key, b"nonce", theirs.sign(b"nonce"))
    assert (
        decode_public(pair.public_key, role)
        and pair.public_key[0] == "OAU"[[PREFIX_OPERATOR, 0, PREFIX_USER].index(role)]
    )


@pytest.mark.parametrize("text", ["", "SUAAAA", "UAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "x" * 56])
def test_bad_keys_refused(text: str) -> None:
    with pytest.raises(KeyError_):
        KeyPair.from_seed(text)
    with pytest.raises(KeyError_):
        decode_public(text)


def test_minted_claims_have_the_v2_shape() -> None:
    op = KeyPair.create(PREFIX_OPERATOR)
    acc, user = KeyPair.create(PREFIX_ACCOUNT), KeyPair.create(PREFIX_USER)
    assert decode(operator_jwt(op, system_account=acc.public_key)).nats == {
        "type": "operator",
        "system_account": acc.public_key,
        "version": 2,
    }
    account = decode(account_jwt(acc.public_key, op, conn=2, jetstream={"streams": 1})).nats
    assert account["limits"]["conn"] == 2 and account["limits"]["streams"] == 1
    assert account["limits"]["mem_storage"] == -1 and account["type"] == "account"
    token = user_jwt(user.public_key, acc, pub={"allow": ["a"]}, bearer_token=True)
    assert decode(token).nats["bearer_token"] is True and decode(token).claims["iss"] == acc.public_key
    text = creds(token, user.seed)
    assert text.startswith("-----BEGIN NATS USER JWT-----\n" + token + "\n------END NATS USER JWT------\n")
    assert f"-----BEGIN USER NKEY SEED-----\n{user.seed}\n------END USER NKEY SEED------" in text
