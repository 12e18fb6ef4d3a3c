"""Tests of ``jsemu/jetstream/consumers/`` run in-process: the consumer model, its timers on the
server's clock, faults."""
