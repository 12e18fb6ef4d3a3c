"""The generated names: nats-server's alphabet and shapes, and repeatable where seeded."""

from __future__ import annotations

import random
import re

from jsemu.ids import BASE62, get_hash, new_event_id, nkey_like, random_name, random_token


def test_alphabet_is_nuids() -> None:
    assert BASE62 == "0123456789" + "ABCDEFGHIJKLMNOPQRSTUVWXYZ" + "abcdefghijklmnopqrstuvwxyz"


def test_get_hash_matches_the_real_cluster() -> None:
    # Peer ids a real three-node cluster reported for its servers n1 and n2.
    assert (get_hash("n1"), get_hash("n2")) == ("fjFyEjc1", "44jzkV9D")


def test_event_ids_are_nuid_shaped() -> None:
    ids = {new_event_id() for _ in range(200)}
    assert len(ids) == 200
    assert all(re.fullmatch(r"[0-9A-Za-z]{22}", i) for i in ids)


def test_random_token_uses_every_digit_and_nothing_else() -> None:
    seen = set(b"".join(random_token(size) for size in range(1, 120)))
    assert seen == set(BASE62.encode())


def test_random_name_repeats_under_a_seed() -> None:
    assert random_name(random.Random(7)) == random_name(random.Random(7))
    assert re.fullmatch(r"[0-9A-Za-z]{8}", random_name(random.Random()))


def test_server_ids_are_nkey_shaped() -> None:
    assert re.fullmatch(r"N[A-Z2-7]{55}", nkey_like("N"))
