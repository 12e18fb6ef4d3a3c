"""Tests of ``jsemu/store/``: the stream store against a naive model (``store_model.py``) and Go's
rules."""
