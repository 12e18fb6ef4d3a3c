"""Tests of ``jsemu/jetstream/cluster/``: simulated peers, replication, leader and quorum
advisories."""
