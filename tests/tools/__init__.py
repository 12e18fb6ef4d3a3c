"""Tests of ``jsemu/tools/``."""
