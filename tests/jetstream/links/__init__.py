"""Tests of ``jsemu/jetstream/links/``: mirrors and sources across accounts (the differential ones
of one account are in ``api/``)."""
