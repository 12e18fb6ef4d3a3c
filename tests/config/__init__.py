"""Tests of ``jsemu/config/``: configuration files and flags, refused keys and start-up failures,
beside nats-server."""
