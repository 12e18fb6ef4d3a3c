"""Per-message TTL expiry in the store against a plain model (hypothesis).

The model keeps every message with its timestamp and TTL and says which are alive at a
given time: a TTL is up at ``ts + ttl``, max_age at ``ts + max_age`` unless the TTL is
``never``. The store must keep exactly those, on a manual clock, in both flavours, and a
follower applying the leader's records (then expiring on its own clock) must agree.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from jsemu.store import StoreLimits, new_store
from jsemu.store.clock import ManualClock

SECOND = 1_000_000_000
TTLS = [None, "never", "1", "2s", "3", "1m0s", "0.5s"]  # "0.5s" is invalid: stored, no TTL

op = st.one_of(
    st.tuples(st.just("pub"), st.sampled_from([b"a", b"b", b"c"]), st.sampled_from(TTLS)),
    # Waits in ms, chosen so that deadlines are hit exactly as well as passed.
    st.tuples(st.just("wait"), st.sampled_from([1, 250, 500, 999, 1000, 1500, 2000, 2500]), st.none()),
)


def alive(model: list[tuple[int, int, str | None]], now: int, max_age: int) -> list[int]:
    out = []
    for seq, ts, ttl in model:
        if ttl == "never":
            out.append(seq)
            continue
        seconds = {"1": 1, "2s": 2, "3": 3, "1m0s": 60}.get(ttl or "", 0)
        if seconds and now >= ts + seconds * SECOND:
            continue
        if max_age and now >= ts + max_age:
            continue
        out.append(seq)
    return out


def live(store: object, last: int) -> list[int]:
    return [seq for seq in range(1, last + 1) if store.load(seq) is not None]  # type: ignore[attr-defined]


@settings(max_examples=60, deadline=None)
@given(
    ops=st.lists(op, max_size=40),
    storage=st.sampled_from(["memory", "file"]),
    max_age_s=st.sampled_from([0, 2, 5]),
)
def test_ttl_expiry_matches_the_model(ops: list[tuple[str, object, object]], storage: str, max_age_s: int) -> None:
    clock = ManualClock()
    max_age = max_age_s * SECOND
    limits = StoreLimits(allow_msg_ttl=True, max_age_ns=max_age)
    store = new_store(storage, limits, clock, 1)
    model: list[tuple[int, int, str | None]] = []
    for kind, arg, ttl in ops:
        if kind == "pub":
            hdr = b"" if ttl is None else b"NATS/1.0\r\nNats-TTL: %s\r\n\r\n" % str(ttl).encode()
            seq, ts = store.append(arg, hdr, b"x")  # type: ignore[arg-type]
            model.append((seq, ts, ttl))  # type: ignore[arg-type]
        else:
            clock.advance(int(arg) * 1_000_000)  # type: ignore[call-overload]
        want = alive(model, clock.now_ns(), max_age)
        assert store.state().msgs == len(want)
        assert live(store, len(model)) == want


def test_a_store_without_allow_msg_ttl_keeps_ttl_messages() -> None:
    """Sourced or mirrored messages may carry a TTL into a stream without TTLs: kept."""
    clock = ManualClock()
    store = new_store("memory", StoreLimits(), clock, 1)
    store.append(b"a", b"NATS/1.0\r\nNats-TTL: 1\r\n\r\n", b"x")
    clock.advance(5 * SECOND)
    assert store.state().msgs == 1


def test_stream_expiry_leaves_removal_to_the_stream() -> None:
    """``stream_expires`` (subject delete markers): reads expire nothing; ``expiry_due``
    names max_age first, then TTLs, and ``next_expiry`` the next deadline."""
    clock = ManualClock()
    store = new_store("memory", StoreLimits(allow_msg_ttl=True, stream_expires=True, max_age_ns=10 * SECOND), clock, 1)
    store.append(b"a", b"", b"1")
    store.append(b"b", b"NATS/1.0\r\nNats-TTL: 2\r\n\r\n", b"2")
    store.append(b"c", b"NATS/1.0\r\nNats-TTL: never\r\n\r\n", b"3")
    t0 = clock.now_ns()
    assert store.next_expiry() == t0 + 2 * SECOND
    clock.advance(2 * SECOND)
    assert store.state().msgs == 3
    assert store.expiry_due() == [2]
    assert store.expiry_due() == []  # handed out once
    store.remove(2)
    assert store.next_expiry() == t0 + 10 * SECOND
    clock.advance(8 * SECOND)
    assert store.expiry_due() == [1]
    assert store.state().msgs == 3 - 1


def test_never_counts_without_allow_msg_ttl_and_ttls_recover_when_allowed() -> None:
    """Go's max_age walk reads ``never`` from the header whatever the config (a sourced message
    may bring it); turning ``allow_msg_ttl`` on schedules the TTLs already stored
    (``recoverTTLState``)."""
    clock = ManualClock()
    store = new_store("memory", StoreLimits(max_age_ns=10 * SECOND), clock, 1)
    store.append(b"a", b"NATS/1.0\r\nNats-TTL: never\r\n\r\n", b"1")
    store.append(b"b", b"NATS/1.0\r\nNats-TTL: 2\r\n\r\n", b"2")
    store.append(b"c", b"", b"3")
    clock.advance(3 * SECOND)
    assert live(store, 3) == [1, 2, 3]
    store.update_limits(StoreLimits(max_age_ns=10 * SECOND, allow_msg_ttl=True))
    assert live(store, 3) == [1, 3]
    clock.advance(10 * SECOND)
    assert live(store, 3) == [1]
    plain = new_store("file", StoreLimits(max_age_ns=SECOND), clock, 1)
    plain.append(b"a", b"NATS/1.0\r\nNats-TTL: never\r\n\r\n", b"1")
    plain.append(b"b", b"", b"2")
    clock.advance(2 * SECOND)
    assert live(plain, 2) == [1]
