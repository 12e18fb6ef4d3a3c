"""Tests of ``jsemu/jetstream/limits/``: server and account JetStream limits, beside nats-server."""
