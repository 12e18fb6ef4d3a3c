"""Tests of ``jsemu/protocol/``: parsing, encoding and Go JSON decoding, and the core protocol's
bytes on the wire beside nats-server."""
