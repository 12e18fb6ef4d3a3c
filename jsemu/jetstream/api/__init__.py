"""The ``$JS.API`` face of JetStream: one handler table (``table.py``), one handler module
per family (``streams``, ``snapshots``, ``consumers``, ``cluster``), the registry they
register with, the request structs and the error table, and the answers of an account
without JetStream (``not_enabled.py``). Handlers are thin: check the request in nats-server's
order, call the model (the service, a stream, a consumer set, a feature module), build the
reply."""
