"""Tests of the assembled server (``jsemu/app.py``, ``threaded.py``) and its command line
(``cli/``: ``jsemu serve``, ``jsemu nats-server``, ``jsemu shim``)."""
