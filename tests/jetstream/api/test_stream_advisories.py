"""Stream action advisories side by side with nats-server:
``$JS.EVENT.ADVISORY.STREAM.CREATED|UPDATED|DELETED.<stream>`` (``stream_action``), with the
advisory ``id`` and timestamps normalised. Who sends one and who does not: a create that
finds the same stream sends none, every successful update sends one (even one that changes
nothing), a failed create, update or delete sends none, a purge sends none.
"""

from __future__ import annotations

from support.pair import Pair

from .test_consumer_pause import Advisories

API = "$JS.API.STREAM"


async def test_stream_create_update_delete_advisories(pair: Pair) -> None:
    adv = await Advisories.listen(pair, ("$JS.EVENT.ADVISORY.STREAM.>",))
    try:
        cfg = {"name": "ADV", "subjects": ["adv.a"], "storage": "memory"}
        await pair.same(f"{API}.CREATE.ADV", cfg)
        events = [e.strip() for e in await adv.expect(1)]
        created = (
            '{"type":"io.nats.jetstream.advisory.v1.stream_action","id":"<id>","timestamp":"<ts>",'
            '"stream":"ADV","action":"create"}'
        )
        assert events == [created]
        await pair.same(f"{API}.CREATE.ADV", cfg)  # the same stream again: no advisory
        await pair.same(f"{API}.CREATE.ADV", {**cfg, "subjects": ["adv.z"]})  # 10058: none
        await adv.expect(0)
        await pair.same(f"{API}.UPDATE.ADV", cfg)  # nothing changes, still an advisory
        await pair.same(f"{API}.UPDATE.ADV", {**cfg, "subjects": ["adv.a", "adv.b"]})
        assert [e.strip().rsplit(",", 1)[1] for e in await adv.expect(2)] == ['"action":"modify"}'] * 2
        await pair.same(f"{API}.UPDATE.ADV", {**cfg, "storage": "file"})  # refused: none
        await pair.same(f"{API}.UPDATE.NOPE", {**cfg, "name": "NOPE"})
        await pair.same(f"{API}.PURGE.ADV")
        await adv.expect(0)
        await pair.same(f"{API}.DELETE.ADV")
        deleted = (
            '{"type":"io.nats.jetstream.advisory.v1.stream_action","id":"<id>","timestamp":"<ts>",'
            '"stream":"ADV","action":"delete"}'
        )
        await adv.expect_after_stream_delete([deleted])
        await pair.same(f"{API}.DELETE.ADV")  # 10059: none
        await adv.expect(0)
    finally:
        await adv.close()
