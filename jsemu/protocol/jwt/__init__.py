"""NATS JWTs and nkeys (sans-I/O): the codec, key pairs, and minting for tests and the fixture."""

from .codec import JwtError, Token, decode, encode
from .keys import PREFIX_ACCOUNT, PREFIX_OPERATOR, PREFIX_USER, KeyPair

__all__ = ["PREFIX_ACCOUNT", "PREFIX_OPERATOR", "PREFIX_USER", "JwtError", "KeyPair", "Token", "decode", "encode"]
