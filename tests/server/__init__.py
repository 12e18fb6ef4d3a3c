"""Tests of ``jsemu/server/``: the NATS core (routing, outbound path, accounts, auth, TLS,
monitoring, limits, slow consumers)."""
