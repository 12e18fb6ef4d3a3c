"""Client-level tests: real client libraries (nats-py, nats.js) against jsemu and nats-server."""
