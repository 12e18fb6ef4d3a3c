"""The ``$JS.API`` face of JetStream: one handler table, one handler module per family."""
