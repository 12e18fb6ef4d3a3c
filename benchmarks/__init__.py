"""Benchmarks: run by hand, each prints a table with jsemu's and the real nats-server's figures."""
