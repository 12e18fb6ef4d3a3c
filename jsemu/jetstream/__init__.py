"""JetStream: streams, consumers and the $JS.API of one account."""
