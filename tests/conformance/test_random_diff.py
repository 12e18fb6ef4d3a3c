"""hypothesis: random small streams and random Direct Get requests, jsemu against nats-server.

Each example builds a :class:`~.model.Scenario` (a stream of random subjects from a small
alphabet, random payloads and header blocks, some deletes, maybe a filtered purge, then a few
random requests mixing every request field), runs it on a fresh nats-server and then on a
fresh jsemu, and requires the same normalised reply frames (see :mod:`.runner`).

Half the requests take the shapes jsemu answers on its fast paths (a single get by sequence
or literal last subject, a batch by sequence), with sequences of stored messages; measured
over the 40 examples: 54 fast single replies and 24 fast batches with messages (before this
split: 15 and one batch, on an empty stream). One explicit example holds the boundary no random
stream reaches: ``multi_last`` over exactly 1024 subjects, and 1025.

``JSEMU_DG_EXAMPLES`` sets the number of examples (default 40); the run is derandomized, so
it is the same every time. ``JSEMU_DG_SHRINK=1`` turns shrinking on (slow: a fresh pair of
servers per candidate).
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

import jsemu
from jsemu.conformance.model import Delete, Get, Pub, Purge, Scenario, Step, hdrs
from jsemu.conformance.runner import run_scenario

EXAMPLES = int(os.environ.get("JSEMU_DG_EXAMPLES", "40"))
#: Shrinking restarts both servers for every candidate and can take minutes; the unshrunk
#: failing example (printed, and reproducible: the run is derandomized) names the request.
SHRINK = os.environ.get("JSEMU_DG_SHRINK", "") not in ("", "0")

TOKENS = ["a", "b", "c", "ab"]
HEADERS: list[bytes | None] = [
    None,
    None,
    None,
    hdrs(),
    hdrs("Foo: 1"),
    hdrs("Foo: 1", "Foo: 2", "foo: 3"),
    hdrs("A: b", status="503 x"),
    hdrs(status="503 x"),
    hdrs("Nats-Sequence: 99", "Nats-Stream: X", "Nats-Num-Pending: 5"),
]
FIXED_FILTERS = ["r.*", "r.>", "r.a.*", "r.*.b", ">", "*", "r.a.>", "r.*.*", "x.y", "r", "r.a.b.c.d", "r.a*", "r.a>"]

subjects = st.lists(st.sampled_from(TOKENS), min_size=1, max_size=3).map(lambda t: "r." + ".".join(t))
any_filter = st.one_of(subjects, st.sampled_from(FIXED_FILTERS))
payloads = st.one_of(st.just(b""), st.binary(max_size=12), st.sampled_from([b"x" * 40, b"\r\n", b"{}"]))
messages = st.lists(st.tuples(subjects, payloads, st.sampled_from(HEADERS)), min_size=1, max_size=12)


@st.composite
def times(draw: st.DrawFn, n: int) -> str:
    """A time relative to a stored message's timestamp, or a fixed far one."""
    if n and draw(st.integers(0, 5)):
        seq = draw(st.integers(1, n))
        delta = draw(st.sampled_from([-1, 0, 0, 1]))
        return f"{{ts:{seq}{delta:+d}}}"
    return draw(st.sampled_from(["2000-01-01T00:00:00Z", "2200-01-01T00:00:00Z", "0001-01-01T00:00:00Z"]))


def without(d: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k != key}


@st.composite
def requests(draw: st.DrawFn, n: int, stored: list[str]) -> Get:
    seqs = st.one_of(st.integers(0, n + 2), st.integers(1, max(n, 1)), st.sampled_from([1, 18446744073709551615]))
    filters = st.one_of(st.sampled_from(stored), st.sampled_from(stored), any_filter) if stored else any_filter
    # up_to_seq: at, below and beyond the last sequence (file and memory stores differ beyond it).
    ceilings = st.one_of(st.integers(1, n + 3), st.sampled_from([n, n + 1, 1000, 18446744073709551615]))
    common: dict[str, Any] = {
        "seq": seqs,
        "batch": st.integers(-2, 6),
        "max_bytes": st.sampled_from([-1, 0, 1, 10, 30, 60, 1000]),
        "no_hdr": st.booleans(),
    }
    shapes = [
        st.fixed_dictionaries({"seq": seqs}, optional={**without(common, "seq"), "next_by_subj": filters}),
        st.fixed_dictionaries(
            {"last_by_subj": filters},
            optional={
                "no_hdr": st.booleans(),
                "batch": st.integers(-2, 0),
                "up_to_seq": seqs,
                "max_bytes": common["max_bytes"],
            },
        ),
        st.fixed_dictionaries({"next_by_subj": filters}, optional={**common, "start_time": times(n)}),
        st.fixed_dictionaries(
            {"multi_last": st.lists(filters, min_size=1, max_size=3)},
            optional={**common, "up_to_seq": ceilings, "start_time": times(n)},
        ),
        st.fixed_dictionaries(
            {"multi_last": st.lists(filters, min_size=1, max_size=3), "up_to_time": times(n)},
            optional={**common},
        ),
        st.fixed_dictionaries({"start_time": times(n)}, optional={**without(common, "seq"), "next_by_subj": filters}),
        st.fixed_dictionaries(
            {},
            optional={
                **common,
                "last_by_subj": filters,
                "next_by_subj": filters,
                "start_time": times(n),
                "multi_last": st.lists(filters, max_size=2),
                "up_to_seq": seqs,
                "up_to_time": times(n),
                "zzz": st.just(1),
            },
        ),
    ]
    # The shapes jsemu answers on its fast paths, with messages present: single gets by
    # sequence or literal last subject (the bulk path of runs of header-less gets) and
    # batches by sequence without a filter (``live_entries``). Half the requests take them.
    present = st.integers(1, max(n, 1))
    fast_shapes = [
        st.fixed_dictionaries({"seq": present}),
        st.fixed_dictionaries({"last_by_subj": st.sampled_from(stored)}) if stored else st.just({"seq": 1}),
        st.fixed_dictionaries(
            {"seq": present, "batch": st.integers(1, 6)},
            optional={"max_bytes": common["max_bytes"], "no_hdr": st.booleans()},
        ),
    ]
    if draw(st.booleans()):
        fields: dict[str, Any] = draw(st.one_of(*fast_shapes))
        return Get(json.dumps(fields, separators=(",", ":")))
    fields = draw(st.one_of(*shapes))
    if draw(st.integers(0, 9)) == 0:
        fields = {k.upper(): v for k, v in fields.items()}
    body = json.dumps(fields, separators=(",", ":"))
    hdr = draw(st.sampled_from([None] * 18 + [hdrs("Nats-Required-Api-Level: 9"), hdrs("Nats-Required-Api-Level: 1")]))
    if draw(st.integers(0, 4)) == 0:  # the subject-appended form
        key = draw(filters)
        extra = draw(st.sampled_from(["", '{"no_hdr":true}', "{}", '{"seq":1}', '{"max_bytes":1}', "x"]))
        return Get(extra, key=key, hdr=hdr)
    return Get(body, hdr=hdr)


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    storage = draw(st.sampled_from(["file", "memory"]))
    msgs = draw(messages) if draw(st.integers(0, 15)) else []
    n = len(msgs)
    steps: list[Step] = [Pub(s, p, h) for s, p, h in msgs]
    if n >= 3:
        for seq in draw(st.lists(st.integers(1, n), max_size=2, unique=True)):
            steps.append(Delete(seq))
    if draw(st.integers(0, 5)) == 0:
        steps.append(Purge({"filter": draw(subjects)}))
    stored = sorted({s for s, _, _ in msgs})
    stored += [s.rsplit(".", 1)[0] + ".*" for s in stored if s.count(".") > 1]
    steps += draw(st.lists(requests(n, stored), min_size=2, max_size=12))
    config = {"name": "S", "subjects": ["r.>"], "storage": storage, "allow_direct": True}
    return Scenario("random", (config,), tuple(steps))


#: The boundary no random stream reaches: multi_last answers up to 1024 subjects
#: (``maxAllowedResponses``), one more is "too many results".
MULTI_LAST_LIMIT = Scenario(
    "multi_last limit",
    ({"name": "S", "subjects": ["r.>"], "storage": "memory", "allow_direct": True},),
    (
        *(Pub(f"r.{i}", b"", None) for i in range(1025)),
        Get('{"multi_last":["r.>"],"up_to_seq":1024,"batch":1}'),
        Get('{"multi_last":["r.>"],"up_to_seq":1025,"batch":1}'),
    ),
)


async def both(scenario: Scenario) -> tuple[list[list[str]], list[list[str]]]:
    from support.servers import RealServer

    real = RealServer()
    try:
        want = await run_scenario("127.0.0.1", real.port, scenario)
    finally:
        real.stop()
    emu = jsemu.Server()
    await emu.start()
    try:
        got = await run_scenario("127.0.0.1", emu.port, scenario, want, first_timeout=1.0)
    finally:
        await emu.stop()
    return got, want


@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    phases=[p for p in Phase if SHRINK or p is not Phase.shrink],
    print_blob=False,
)
@given(scenario=scenarios())
@example(scenario=MULTI_LAST_LIMIT)
def test_same_replies_as_real_server(scenario: Scenario) -> None:
    got, want = asyncio.run(both(scenario))
    for i, (get, w) in enumerate(zip(scenario.requests, want, strict=True)):
        assert i < len(got), f"no reply from jsemu to {get.describe()!r}"
        assert got[i] == w, f"request {i}: {get.describe()}"
    assert len(got) == len(want)
