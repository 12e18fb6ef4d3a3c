"""Planted-bug check of the test suite: see ``mutations.py`` (the list) and ``__main__.py`` (the runner)."""
