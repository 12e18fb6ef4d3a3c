"""Tests of ``jsemu/jetstream/events/``."""
