"""Tests of the assembled server (``jsemu/app.py``, ``threaded.py``) and its command line
(``cli.py``: ``jsemu serve``, ``jsemu shim``)."""
