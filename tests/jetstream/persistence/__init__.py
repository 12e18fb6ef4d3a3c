"""Tests of ``jsemu/jetstream/persistence/`` and the write-ahead log: restarts, crashes and the
saved format, beside nats-server."""
