"""Purge with ``keep`` (``purge_ex``) against the naive model on small fixed stores: one
subject, several under a wildcard, with and without an upper sequence. The state machine in
``test_store_stateful.py`` reaches these cases at random; here every ``keep`` is tried."""

from __future__ import annotations

import pytest

from jsemu.store import ManualClock, StoreLimits, new_store

from .store_model import ModelStore

_PUBS = [b"a.b", b"a.c", b"a.b", b"b.c", b"a.b", b"a.c", b"a.b"]


@pytest.mark.parametrize("subject", [b"a.b", b"a.*", b"a.>", b">", b""])
@pytest.mark.parametrize("seq", [0, 4])
@pytest.mark.parametrize("keep", range(7))
@pytest.mark.parametrize("storage", ["memory", "file"])
def test_purge_keep_matches_the_model(subject: bytes, seq: int, keep: int, storage: str) -> None:
    clock = ManualClock()
    store = new_store(storage, StoreLimits(), clock)
    model = ModelStore(StoreLimits(), clock, storage, 1)
    for i, pub in enumerate(_PUBS):
        assert store.append(pub, b"", b"%d" % i) == model.append(pub, b"", b"%d" % i)
    assert store.purge_ex(subject, seq, keep) == model.purge_ex(subject, seq, keep)
    assert store.state() == model.state()
