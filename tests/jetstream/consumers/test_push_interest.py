"""Which subscriptions bind a push consumer (``jsemu.jetstream.consumers.push_interest``), side
by side with nats-server 2.15.1: what each subscription receives and ``push_bound``.

What the binary does (each a case below, and hypothesis draws more):

* only a subscription on exactly the deliver subject binds the consumer; ``dlv.*``, ``dlv.>``,
  ``>``, ``*.<stream>`` alone leave it unbound (nothing delivered), and once the exact one
  leaves, a wildcard one left behind does not keep it bound;
* without ``deliver_group`` a lone queue subscription does not bind it; with one, a plain
  subscription or another group's member does not, only a member of that group (a plain
  subscriber beside it receives every message too);
* a consumer made while its group has a member on ``dlv.>`` or ``>`` besides the exact one
  starts unbound (the server looks at the group's first member in match order), and stays so
  until the exact members leave and one comes back; made before the exact member comes, or
  with the other member on ``dlv.*``, it is bound;
* unsubscribing the last exact subscriber unbinds it, subscribing again binds it (and what
  was stored meanwhile is delivered);
* an update with a new ``deliver_group`` alone changes nothing: interest still follows the
  group the consumer was made with; a bound consumer cannot take a new deliver subject
  (10013), an unbound one can, and its new subject is followed with the old group;
* idle heartbeats go out only while bound; a consumer with an inactive threshold that only
  wildcard subscribers (or another group's members) listen to is deleted after it.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jsemu

from .push_interest_scenario import SUBJECTS, SubSpec, run

S = SubSpec
CHECK = ("check", 0)


def _steps(*ops: str) -> list[tuple[str, int]]:
    """``"create"``, ``"check"``, ``"sub 0"``, ``"unsub 1"``..."""
    out = []
    for op in ops:
        name, _, i = op.partition(" ")
        out.append((name, int(i or 0)))
    return out


CASES: dict[str, tuple[str | None, list[SubSpec], list[tuple[str, int]]]] = {
    "exact plain, unsub, sub again": (
        None,
        [S(0, "exact", None)],
        _steps("create", "check", "sub 0", "check", "unsub 0", "check", "sub 0", "check"),
    ),
    "exact plain before create": (None, [S(0, "exact", None)], _steps("sub 0", "create", "check")),
    "wildcards alone": (
        None,
        [S(0, "star", None), S(1, "gt", None), S(0, "all", None), S(1, "star1", None)],
        _steps("sub 0", "sub 1", "create", "sub 2", "sub 3", "check"),
    ),
    "a wildcard left behind": (
        None,
        [S(0, "exact", None), S(1, "star", None)],
        _steps("create", "sub 0", "sub 1", "check", "unsub 0", "check"),
    ),
    "queue without deliver_group": (None, [S(0, "exact", "G")], _steps("create", "sub 0", "check")),
    "the group's member": ("G", [S(0, "exact", "G")], _steps("create", "sub 0", "check", "unsub 0", "check")),
    "another group": ("G", [S(0, "exact", "H")], _steps("create", "sub 0", "check")),
    "plain with deliver_group": ("G", [S(0, "exact", None)], _steps("sub 0", "create", "check")),
    "plain beside the group": (
        "G",
        [S(0, "exact", None), S(1, "exact", "G")],
        _steps("sub 0", "create", "sub 1", "check", "unsub 1", "check"),
    ),
    "the group on dlv.*": ("G", [S(0, "star", "G")], _steps("create", "sub 0", "check")),
    "group member on dlv.> first": (
        "G",
        [S(0, "gt", "G"), S(1, "exact", "G"), S(0, "exact", "G")],
        _steps("sub 0", "sub 1", "create", "check", "sub 2", "check", "unsub 1", "check", "unsub 2", "sub 1", "check"),
    ),
    "group member on dlv.> after create": (
        "G",
        [S(0, "gt", "G"), S(1, "exact", "G")],
        _steps("sub 0", "create", "sub 1", "check"),
    ),
    "group member on dlv.*": (
        "G",
        [S(0, "star", "G"), S(1, "exact", "G")],
        _steps("sub 0", "sub 1", "create", "check"),
    ),
    "group member on >, exact leaves": (
        "G",
        [S(0, "all", "G"), S(1, "exact", "G")],
        _steps("create", "sub 1", "sub 0", "check", "unsub 1", "check"),
    ),
    "two exact members leave one by one": (
        "G",
        [S(0, "exact", "G"), S(1, "gt", "G"), S(1, "exact", "G")],
        _steps("create", "sub 0", "sub 1", "sub 2", "check", "unsub 0", "check", "unsub 2", "check"),
    ),
}


#: Updates (``update i`` applies the i-th change to the consumer's config).
UPDATE_CASES: dict[str, tuple[str | None, list[SubSpec], list[tuple[str, int]], list[dict[str, str]]]] = {
    # A new deliver_group alone changes nothing: the plain subscription still binds it.
    "no group, then G": (
        None,
        [S(0, "exact", None), S(1, "exact", "G")],
        _steps("sub 0", "create", "check", "update 0", "check", "unsub 0", "check", "sub 1", "check"),
        [{"deliver_group": "G"}],
    ),
    "G, then H": (
        "G",
        [S(0, "exact", "H"), S(1, "exact", "G")],
        _steps("sub 1", "create", "check", "update 0", "check", "unsub 1", "check", "sub 0", "check"),
        [{"deliver_group": "H"}],
    ),
    # A bound consumer keeps its deliver subject (10013); an unbound one moves, and the new
    # subject's notification is registered with the group it had.
    "new subject while bound": (
        None,
        [S(0, "exact", None), S(1, "exact2", None)],
        _steps("sub 0", "sub 1", "create", "check", "update 0", "check"),
        [{"deliver_subject": "{d2}"}],
    ),
    "new subject and group while unbound": (
        "G",
        [S(0, "exact2", "G"), S(1, "exact2", "H")],
        _steps("create", "update 0", "sub 1", "check", "sub 0", "check"),
        [{"deliver_subject": "{d2}", "deliver_group": "H"}],
    ),
    "new subject already subscribed": (
        None,
        [S(0, "exact2", None)],
        _steps("create", "sub 0", "check", "update 0", "check", "unsub 0", "check"),
        [{"deliver_subject": "{d2}"}],
    ),
}


async def _both(
    real_port: int,
    group: str | None,
    specs: list[SubSpec],
    steps: list[tuple[str, int]],
    updates: list[dict[str, str]] | None = None,
    extra: dict[str, Any] | None = None,
) -> Any:
    stream = f"P{uuid.uuid4().hex[:10]}"
    async with jsemu.Server() as srv:
        return await asyncio.gather(
            run(srv.port, stream, group, specs, steps, updates, extra),
            run(real_port, stream, group, specs, steps, updates, extra),
        )


@pytest.mark.parametrize("case", list(CASES))
def test_push_interest_as_on_nats_server(real_server: Any, case: str) -> None:
    group, specs, steps = CASES[case]
    emu, real = asyncio.run(_both(real_server.port, group, specs, steps))
    assert emu == real, f"{case}: jsemu {emu} != real {real}"


@pytest.mark.parametrize("case", list(UPDATE_CASES))
def test_updated_consumer_interest_as_on_nats_server(real_server: Any, case: str) -> None:
    group, specs, steps, updates = UPDATE_CASES[case]
    emu, real = asyncio.run(_both(real_server.port, group, specs, steps, updates))
    assert emu == real, f"{case}: jsemu {emu} != real {real}"


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[str | None, list[SubSpec], list[tuple[str, int]]]:
    """Up to four subscriptions on two connections, subscribed in any order around the
    consumer's creation; then a few rounds of unsubscribing and subscribing again."""
    group = draw(st.sampled_from([None, "G"]))
    specs = draw(
        st.lists(
            st.builds(SubSpec, st.integers(0, 1), st.sampled_from(list(SUBJECTS)), st.sampled_from([None, "G", "H"])),
            min_size=1,
            max_size=4,
        )
    )
    order = draw(st.permutations(range(len(specs))))
    at = draw(st.integers(0, len(specs)))
    steps = [("sub", i) for i in order]
    steps.insert(at, ("create", 0))
    steps.append(CHECK)
    live = set(range(len(specs)))
    for _ in range(draw(st.integers(0, 2))):
        for i in draw(st.lists(st.integers(0, len(specs) - 1), min_size=1, max_size=3, unique=True)):
            steps.append(("unsub" if i in live else "sub", i))
            live ^= {i}
        steps.append(CHECK)
    return group, specs, steps


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scenario=scenarios())
def test_generated_subscribers_as_on_nats_server(
    real_server: Any, scenario: tuple[str | None, list[SubSpec], list[tuple[str, int]]]
) -> None:
    group, specs, steps = scenario
    emu, real = asyncio.run(_both(real_server.port, group, specs, steps))
    assert emu == real, f"group={group} subs={specs} steps={steps}: jsemu {emu} != real {real}"


#: Idle heartbeats (every 0.2 s) go out only while the consumer is bound, to every subscriber.
HEARTBEAT_CASES: dict[str, tuple[str | None, list[SubSpec], list[tuple[str, int]]]] = {
    "a wildcard subscriber alone": (
        None,
        [S(0, "star", None), S(1, "exact", None)],
        _steps("sub 0", "create", "idle", "sub 1", "idle"),
    ),
    "plain subscriber of a group consumer": (
        "G",
        [S(0, "exact", None), S(1, "exact", "G")],
        _steps("sub 0", "create", "idle", "sub 1", "idle", "unsub 1", "idle"),
    ),
}


@pytest.mark.parametrize("case", list(HEARTBEAT_CASES))
def test_heartbeats_only_while_bound_as_on_nats_server(real_server: Any, case: str) -> None:
    group, specs, steps = HEARTBEAT_CASES[case]
    emu, real = asyncio.run(_both(real_server.port, group, specs, steps, extra={"idle_heartbeat": 200_000_000}))
    assert emu == real, f"{case}: jsemu {emu} != real {real}"


#: A consumer with an inactive threshold that no subscription binds goes after it (10014 then).
INACTIVE_CASES: dict[str, tuple[str | None, list[SubSpec], list[tuple[str, int]]]] = {
    "only a wildcard subscriber": (None, [S(0, "gt", None)], _steps("sub 0", "create", "idle", "check")),
    "only another group's member": ("G", [S(0, "exact", "H")], _steps("sub 0", "create", "idle", "check")),
    "bound, then only a wildcard left": (
        None,
        [S(0, "exact", None), S(1, "star", None)],
        _steps("sub 0", "sub 1", "create", "idle", "check", "unsub 0", "idle", "check"),
    ),
}


@pytest.mark.parametrize("case", list(INACTIVE_CASES))
def test_inactive_threshold_without_binding_as_on_nats_server(real_server: Any, case: str) -> None:
    group, specs, steps = INACTIVE_CASES[case]
    emu, real = asyncio.run(_both(real_server.port, group, specs, steps, extra={"inactive_threshold": 300_000_000}))
    assert emu == real, f"{case}: jsemu {emu} != real {real}"
