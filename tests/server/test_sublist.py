"""The subscription trie against a plain model: every subscription checked by its pattern,
turned into a regular expression here (``*`` one token, a final ``>`` one or more), so the
oracle shares no code with jsemu (not even ``jsemu.subjects``)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from jsemu.server.sublist import Sublist, Subscription


def subject_matches(subject: str, pattern: str) -> bool:
    """NATS wildcard matching by regular expression (the model's own, independent version)."""
    tokens = pattern.split(".")
    parts = ["[^.]+" if t == "*" else re.escape(t) for t in tokens[:-1]]
    last = tokens[-1]
    tail = ".+" if last == ">" else "[^.]+" if last == "*" else re.escape(last)
    return re.fullmatch(r"\.".join([*parts, tail]), subject) is not None


class Client:
    def deliver(self, *args: object) -> bool:
        return True


literal_token = st.sampled_from(["a", "b", "c", "foo*", "b>"])
pattern_token = st.sampled_from(["a", "b", "c", "foo*", "*", ">"])
literal = st.lists(literal_token, min_size=1, max_size=4).map(".".join)
pattern = st.lists(pattern_token, min_size=1, max_size=4).map(".".join)


@settings(max_examples=200, deadline=None)
@given(
    actions=st.lists(
        st.tuples(st.booleans(), pattern, st.sampled_from([None, "q1", "q2"]), st.integers(0, 30)),
        max_size=40,
    ),
    subjects=st.lists(literal, min_size=1, max_size=10),
)
def test_match_equals_model(actions: list[tuple[bool, str, str | None, int]], subjects: list[str]) -> None:
    sl = Sublist()
    client = Client()
    model: dict[int, Subscription] = {}
    for add, pat, queue, key in actions:
        if add and key not in model:
            sub = Subscription(client, pat.encode(), queue.encode() if queue else None, str(key).encode())
            valid = sl.insert(sub)
            toks = pat.split(".")
            assert valid == (">" not in toks[:-1])
            if valid:
                model[key] = sub
        elif not add and key in model:
            assert sl.remove(model.pop(key))
        for subject in subjects:  # interleave matches so the cache is exercised
            result = sl.match(subject.encode())
            got_p = set(result.psubs)
            got_q = {s for group in result.qsubs for s in group}
            want = {s for s in model.values() if subject_matches(subject, s.subject.decode())}
            assert got_p == {s for s in want if s.queue is None}
            assert got_q == {s for s in want if s.queue is not None}
            for group in result.qsubs:
                assert len({s.queue for s in group}) == 1
            assert len(result.qsubs) == len({s.queue for s in want if s.queue is not None})
    assert sl.count == len(model)


def test_empty_tokens_never_match() -> None:
    sl = Sublist()
    sl.insert(Subscription(Client(), b">", None, b"1"))
    assert sl.match(b"foo..bar").psubs == []
    assert sl.match(b".foo").psubs == []
    assert sl.match(b"foo.").psubs == []
    assert len(sl.match(b"foo").psubs) == 1
