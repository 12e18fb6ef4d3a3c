"""Tests of ``jsemu/jetstream/streams/`` run in-process: models of atomic batches, schedules and
retention."""
