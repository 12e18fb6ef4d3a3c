"""nats-server's configuration: the file format, the keys applied, start-up errors."""
