"""The ``$JS.API`` coverage page of the documentation site (``docs/reference/api-coverage.md``):
the endpoints nats-server 2.15.1 answers, and which of them jsemu answers (its ``@api`` registry
plus the endpoints with their own subscriptions, ``jetstream.api.registry.OWN_SUBSCRIPTIONS``).

    python -m jsemu.tools.api_coverage            # print the table
    python -m jsemu.tools.api_coverage --write    # rewrite the page
    python -m jsemu.tools.api_coverage --check    # exit 1 if the page is stale

``python -m jsemu.tools.docs_reference --write`` rewrites it with the other generated pages.

The server's list is nats-server's ``server/jetstream_api.go`` (commit 1787eee0, the v2.15
line): the constants of its ``$JS.API`` endpoints, and who answers each (``pairs`` and
``infopairs`` in ``setJetStreamExportSubs`` for the account's API, the stream's Direct Get
subscriptions, each consumer's own ``MSG.NEXT`` and ``RESET`` subscriptions, and the
``systemSubscribe`` calls of the system account's leader).
``tests/tools/test_api_endpoint_list.py`` fails when a subject of the 2.15.1 binary or a
constant of that source is missing here.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..jetstream.api.registry import OWN_SUBSCRIPTIONS, REFUSED
from ..jetstream.api.table import registered_patterns
from ..version import NATS_VERSION

__all__ = [
    "ACCOUNT",
    "CONSUMER",
    "DIRECT",
    "NATS_SERVER_API",
    "PAGE",
    "SYSTEM",
    "check",
    "coverage_table",
    "main",
    "page",
]

ACCOUNT = "account API"
DIRECT = "stream's Direct Get"
CONSUMER = "the consumer"
SYSTEM = "system account"

#: (Go constant, subject after ``$JS.API.``, who answers it in nats-server), in the order of
#: the constants in ``jetstream_api.go``; no constant: seen only in the 2.15.1 binary.
NATS_SERVER_API: tuple[tuple[str, str, str], ...] = (
    ("JSApiAccountInfo", "INFO", ACCOUNT),
    ("JSApiStreamCreate", "STREAM.CREATE.*", ACCOUNT),
    ("JSApiStreamUpdate", "STREAM.UPDATE.*", ACCOUNT),
    ("JSApiStreams", "STREAM.NAMES", ACCOUNT),
    ("JSApiStreamList", "STREAM.LIST", ACCOUNT),
    ("JSApiStreamInfo", "STREAM.INFO.*", ACCOUNT),
    ("JSApiStreamDelete", "STREAM.DELETE.*", ACCOUNT),
    ("JSApiStreamPurge", "STREAM.PURGE.*", ACCOUNT),
    ("JSApiStreamSnapshot", "STREAM.SNAPSHOT.*", ACCOUNT),
    ("JSApiStreamRestore", "STREAM.RESTORE.*", ACCOUNT),
    ("JSApiMsgDelete", "STREAM.MSG.DELETE.*", ACCOUNT),
    ("JSApiMsgGet", "STREAM.MSG.GET.*", ACCOUNT),
    ("JSDirectMsgGet", "DIRECT.GET.*", DIRECT),
    ("JSDirectGetLastBySubject", "DIRECT.GET.*.>", DIRECT),
    ("JSApiConsumerCreate", "CONSUMER.CREATE.*", ACCOUNT),
    ("JSApiConsumerCreateEx", "CONSUMER.CREATE.*.>", ACCOUNT),
    ("JSApiDurableCreate", "CONSUMER.DURABLE.CREATE.*.*", ACCOUNT),
    ("JSApiConsumers", "CONSUMER.NAMES.*", ACCOUNT),
    ("JSApiConsumerList", "CONSUMER.LIST.*", ACCOUNT),
    ("JSApiConsumerInfo", "CONSUMER.INFO.*.*", ACCOUNT),
    ("JSApiConsumerDelete", "CONSUMER.DELETE.*.*", ACCOUNT),
    ("JSApiConsumerPause", "CONSUMER.PAUSE.*.*", ACCOUNT),
    ("JSApiRequestNextT", "CONSUMER.MSG.NEXT.*.*", CONSUMER),
    ("JSApiConsumerResetT", "CONSUMER.RESET.*.*", CONSUMER),
    ("JSApiConsumerUnpin", "CONSUMER.UNPIN.*.*", ACCOUNT),
    ("JSApiStreamRemovePeer", "STREAM.PEER.REMOVE.*", ACCOUNT),
    ("JSApiStreamEvacuatePeer", "STREAM.PEER.EVACUATE.*", ACCOUNT),
    ("JSApiStreamCancelMove", "STREAM.CANCEL_MOVE.*", ACCOUNT),
    ("JSApiStreamLeaderStepDown", "STREAM.LEADER.STEPDOWN.*", ACCOUNT),
    ("JSApiConsumerLeaderStepDown", "CONSUMER.LEADER.STEPDOWN.*.*", ACCOUNT),
    # In the 2.15.1 binary (it answers them), not yet in the source commit above.
    ("", "CONSUMER.PEER.REMOVE.*.*", ACCOUNT),
    ("", "CONSUMER.PEER.EVACUATE.*.*", ACCOUNT),
    ("JSApiLeaderStepDown", "META.LEADER.STEPDOWN", SYSTEM),
    ("JSApiRemoveServer", "SERVER.REMOVE", SYSTEM),
    ("JSApiEvacuateServer", "SERVER.EVACUATE", SYSTEM),
    ("JSApiMetaRescue", "META.RESCUE", SYSTEM),
    ("JSApiAccountPurge", "ACCOUNT.PURGE.*", SYSTEM),
    ("JSApiServerStreamMove", "ACCOUNT.STREAM.MOVE.*.*", SYSTEM),
    ("JSApiServerStreamCancelMove", "ACCOUNT.STREAM.CANCEL_MOVE.*.*", SYSTEM),
)

#: The generated page, in the documentation site's sources.
PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "api-coverage.md"


def jsemu_endpoints() -> dict[str, str]:
    """Pattern -> how jsemu answers it."""
    out = {
        pattern: "refused (checks, then a clear error)" if pattern in REFUSED else "yes"
        for pattern in registered_patterns()
    }
    out.update((pattern, "yes (own subscription)") for pattern in OWN_SUBSCRIPTIONS)
    return out


def coverage_table() -> str:
    """The markdown table (with a summary line), from the registry and the server's list."""
    ours = jsemu_endpoints()
    known = {subject for _, subject, _ in NATS_SERVER_API}
    extra = sorted(set(ours) - known)
    if extra:
        raise ValueError(f"jsemu answers $JS.API subjects nats-server {NATS_VERSION} does not: {extra}")
    lines = [
        f"| `$JS.API.` subject | nats-server {NATS_VERSION} constant | answered by (nats-server) | jsemu |",
        "| --- | --- | --- | --- |",
    ]
    served = {kind: [0, 0] for kind in (ACCOUNT, DIRECT, CONSUMER, SYSTEM)}
    for constant, subject, kind in NATS_SERVER_API:
        how = ours.get(subject)
        served[kind][1] += 1
        served[kind][0] += how is not None
        name = f"`{constant}`" if constant else "(2.15.1 binary)"
        lines.append(f"| `{subject}` | {name} | {kind} | {how or 'no'} |")
    summary = ", ".join(f"{kind}: {done} of {total}" for kind, (done, total) in served.items())
    return "\n".join([*lines, "", f"jsemu answers {summary}."])


def page() -> str:
    """The whole page: a title, what the table shows, the table."""
    return "\n".join(
        [
            "# `$JS.API` coverage",
            "",
            "<!-- generated by python -m jsemu.tools.docs_reference --write from the @api registry: do not edit -->",
            "",
            f"The `$JS.API` endpoints nats-server {NATS_VERSION} answers (the constants of its",
            "`server/jetstream_api.go` and the subjects seen in its binary), who answers each in",
            "nats-server, and whether jsemu answers it: from jsemu's `@api` handler registry, plus the",
            "Direct Get subscriptions each stream with `allow_direct` makes itself and the `MSG.NEXT` and",
            "`RESET` subscriptions of each consumer. A refused endpoint runs the server's checks, then",
            "answers with a clear error.",
            "",
            coverage_table(),
            "",
        ]
    )


def check(path: Path = PAGE) -> bool:
    """Whether ``path`` already holds the current page."""
    return path.exists() and path.read_text() == page()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jsemu.tools.api_coverage", description=__doc__.split("\n")[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", action="store_true", help="rewrite the page")
    group.add_argument("--check", action="store_true", help="exit 1 if the page is stale")
    parser.add_argument("--page", type=Path, default=PAGE, help="the page to read or write")
    args = parser.parse_args(argv)
    if args.write:
        args.page.write_text(page())
        return 0
    if args.check:
        if check(args.page):
            return 0
        print(f"{args.page}: the API coverage page is stale; run python -m jsemu.tools.api_coverage --write")
        return 1
    print(coverage_table())
    return 0


if __name__ == "__main__":
    sys.exit(main())
