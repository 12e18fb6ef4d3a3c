"""nats-py's Key-Value store sees the same results from jsemu as from nats-server 2.15.1.

Every test runs against both servers (``server`` fixture) and, where it reads keys, in two
variants (``direct`` parameter):

* ``msg-get``: the bucket is created with ``direct=False``, so nats-py reads keys with
  ``$JS.API.STREAM.MSG.GET`` (works without Direct Get);
* ``direct-get``: the bucket is created with ``direct=True`` (``allow_direct`` on its stream), so
  nats-py reads keys with ``$JS.API.DIRECT.GET`` — **these variants NEED DIRECT GET**.

Left out on purpose: ``keys()``, ``history()``, ``watch()`` and ``purge_deletes()``, which all
need consumers. Buckets are updated with ``js.update_stream`` (nats-py has no ``update_key_value``).
"""

from __future__ import annotations

import pytest
from nats.js import JetStreamContext
from nats.js.errors import (
    BadRequestError,
    BucketNotFoundError,
    InvalidBucketNameError,
    InvalidKeyError,
    KeyHistoryTooLargeError,
    KeyNotFoundError,
    KeyWrongLastSequenceError,
    ServerError,
)
from nats.js.kv import KeyValue
from support.names import Names

DIRECT = pytest.mark.parametrize("direct", [False, True], ids=["msg-get", "direct-get"])


def entry(e: KeyValue.Entry) -> tuple[str, str, bytes | None, int | None]:
    return e.bucket, e.key, e.value, e.revision


async def missing(kv: KeyValue, key: str, revision: int | None = None) -> tuple[str | None, tuple | None]:  # type: ignore[type-arg]
    """The operation and entry nats-py attaches to the KeyNotFoundError of ``kv.get``."""
    with pytest.raises(KeyNotFoundError) as exc:
        await kv.get(key, revision=revision)
    e = exc.value
    return e.op, entry(e.entry) if e.entry is not None else None


@DIRECT
async def test_kv_put_get_create_update(js: JetStreamContext, names: Names, direct: bool) -> None:
    bucket = names.bucket()
    kv = await js.create_key_value(bucket=bucket, history=3, direct=direct)

    assert await kv.put("k", b"v1") == 1
    assert entry(await kv.get("k")) == (bucket, "k", b"v1", 1)
    assert await kv.put("k", b"v2") == 2
    assert entry(await kv.get("k")) == (bucket, "k", b"v2", 2)
    assert entry(await kv.get("k", revision=1)) == (bucket, "k", b"v1", 1)
    assert await kv.put("dir.sub-key_x=y/z", b"") == 3
    assert entry(await kv.get("dir.sub-key_x=y/z")) == (bucket, "dir.sub-key_x=y/z", None, 3)

    # create: only when the key has no value.
    assert await kv.create("n", b"n1") == 4
    with pytest.raises(KeyWrongLastSequenceError) as exc:
        await kv.create("n", b"n2")
    assert exc.value.description == "wrong last sequence: 4"
    with pytest.raises(KeyWrongLastSequenceError) as exc:
        await kv.create("k", b"again")
    assert exc.value.description == "wrong last sequence: 2"

    # update: only from the key's current revision.
    assert await kv.update("n", b"n2", last=4) == 5
    with pytest.raises(KeyWrongLastSequenceError) as exc:
        await kv.update("n", b"n3", last=4)
    assert exc.value.description == "wrong last sequence: 5"
    with pytest.raises(KeyWrongLastSequenceError) as exc:
        await kv.update("n", b"n3", last=99)
    assert exc.value.description == "wrong last sequence: 5"
    with pytest.raises(KeyWrongLastSequenceError) as exc:
        await kv.update("fresh", b"x", last=5)
    assert exc.value.description == "wrong last sequence: 0"
    assert entry(await kv.get("n")) == (bucket, "n", b"n2", 5)

    # Reads that find nothing, or another key's message at that revision.
    assert await missing(kv, "nothing") == (None, None)
    with pytest.raises(KeyNotFoundError) as not_found:
        await kv.get("k", revision=4)
    assert not_found.value.message == f"expected '$KV.{bucket}.k', but got '$KV.{bucket}.n'"
    assert await missing(kv, "k", revision=99) == (None, None)

    with pytest.raises(InvalidKeyError):
        await kv.put("bad key", b"x")
    with pytest.raises(InvalidKeyError):
        await kv.get(".k")

    status = await kv.status()
    assert (status.bucket, status.values, status.history) == (bucket, 5, 3)


@DIRECT
async def test_kv_delete_and_purge(js: JetStreamContext, names: Names, direct: bool) -> None:
    bucket = names.bucket()
    kv = await js.create_key_value(bucket=bucket, history=5, direct=direct)

    assert await kv.put("a", b"1") == 1
    assert await kv.put("a", b"2") == 2
    assert await kv.put("b", b"x") == 3

    # delete: a DEL marker on top of the history (old revisions stay readable).
    assert await kv.delete("a") is True
    assert await missing(kv, "a") == ("DEL", (bucket, "a", None, 4))
    assert entry(await kv.get("a", revision=2)) == (bucket, "a", b"2", 2)
    # create over a deleted key works (nats-py reads the marker and expects its revision).
    assert await kv.create("a", b"3") == 5
    assert entry(await kv.get("a")) == (bucket, "a", b"3", 5)

    # delete with an expected revision.
    with pytest.raises(BadRequestError) as exc:
        await kv.delete("a", last=4)
    assert (exc.value.code, exc.value.err_code, exc.value.description) == (400, 10071, "wrong last sequence: 5")
    assert await kv.delete("a", last=5) is True
    assert await missing(kv, "a") == ("DEL", (bucket, "a", None, 6))
    assert await kv.update("a", b"4", last=6) == 7

    # purge: a PURGE marker that rolls up (removes) every earlier revision of the key.
    assert await kv.purge("a") is True
    assert await missing(kv, "a") == ("PURGE", (bucket, "a", None, 8))
    assert await missing(kv, "a", revision=7) == (None, None)
    assert await missing(kv, "a", revision=2) == (None, None)
    assert entry(await kv.get("b")) == (bucket, "b", b"x", 3)

    # Deleting a key that never existed still writes a marker.
    assert await kv.delete("ghost") is True
    assert await missing(kv, "ghost") == ("DEL", (bucket, "ghost", None, 9))
    assert await kv.purge("b") is True

    status = await kv.status()
    # Left: b@3 is gone (purged), a@8 PURGE, ghost@9 DEL, b@10 PURGE.
    assert status.values == 3
    state = status.stream_info.state
    assert (state.messages, state.first_seq, state.last_seq, state.num_deleted) == (3, 8, 10, None)


@DIRECT
async def test_kv_history_limit(js: JetStreamContext, names: Names, direct: bool) -> None:
    """``history=3``: only the last three revisions of a key are kept (``max_msgs_per_subject``)."""
    bucket = names.bucket()
    kv = await js.create_key_value(bucket=bucket, history=3, direct=direct)

    revisions = [await kv.put("h", f"h{i}".encode()) for i in range(5)]
    assert revisions == [1, 2, 3, 4, 5]
    assert await kv.put("other", b"o") == 6
    assert entry(await kv.get("h")) == (bucket, "h", b"h4", 5)
    for rev in (1, 2):
        assert await missing(kv, "h", revision=rev) == (None, None)
    assert [entry(await kv.get("h", revision=rev))[2] for rev in (3, 4, 5)] == [b"h2", b"h3", b"h4"]

    status = await kv.status()
    assert (status.values, status.history) == (4, 3)
    state = status.stream_info.state
    assert (state.messages, state.first_seq, state.last_seq, state.num_deleted) == (4, 3, 6, None)

    # The stream itself answers STREAM.MSG.GET for what is left.
    msg = await js.get_msg(f"KV_{bucket}", subject=f"$KV.{bucket}.h")
    assert (msg.seq, msg.data) == (5, b"h4")


async def test_kv_status_and_update_bucket(js: JetStreamContext, names: Names) -> None:
    """Status and the bucket's stream configuration; reads go through STREAM.MSG.GET."""
    bucket = names.bucket()
    kv = await js.create_key_value(bucket=bucket, history=3, description="kv test", max_value_size=64)
    status = await kv.status()
    assert (status.bucket, status.values, status.history, status.ttl) == (bucket, 0, 3, 0.0)
    c = status.stream_info.config
    assert (c.name, c.subjects, c.description) == (f"KV_{bucket}", [f"$KV.{bucket}.>"], "kv test")
    assert (c.max_msgs_per_subject, c.max_msg_size, c.max_msgs, c.max_bytes, c.max_age) == (3, 64, -1, -1, 0.0)
    assert (c.discard, c.storage, c.retention, c.num_replicas, c.duplicate_window) == (
        "new",
        "file",
        "limits",
        1,
        120.0,
    )
    assert (c.allow_direct, c.allow_rollup_hdrs, c.deny_delete, c.deny_purge, c.allow_msg_ttl) == (
        False,
        True,
        True,
        False,
        True,
    )
    # allow_msg_ttl needs API level 1.
    assert c.metadata == {"_nats.level": "5", "_nats.req.level": "1", "_nats.ver": "2.15.1"}

    with pytest.raises(BadRequestError) as exc:
        await kv.put("big", b"x" * 65)
    assert (exc.value.code, exc.value.err_code, exc.value.description) == (
        400,
        10054,
        "message size exceeds maximum allowed",
    )

    # A bucket cannot be deleted from message by message (deny_delete).
    assert await kv.put("k", b"v") == 1
    with pytest.raises(ServerError) as denied:
        await js.delete_msg(f"KV_{bucket}", 1)
    assert (denied.value.code, denied.value.err_code, denied.value.description) == (
        500,
        10057,
        "message delete not permitted",
    )

    # Update the bucket: more history, another description.
    si = await js.update_stream(c.evolve(max_msgs_per_subject=5, description="more history"))
    assert (si.config.max_msgs_per_subject, si.config.description) == (5, "more history")
    kv = await js.key_value(bucket)
    status = await kv.status()
    assert (status.history, status.values, status.stream_info.config.description) == (5, 1, "more history")
    for i in range(6):
        await kv.put("k", str(i).encode())
    assert (await kv.status()).values == 5
    assert entry(await kv.get("k")) == (bucket, "k", b"5", 7)
    assert await missing(kv, "k", revision=2) == (None, None)
    assert entry(await kv.get("k", revision=3)) == (bucket, "k", b"1", 3)


async def test_kv_bucket_lifecycle(js: JetStreamContext, names: Names) -> None:
    bucket = names.bucket()
    await js.create_key_value(bucket=bucket, history=2)
    # Same configuration again: fine (the stream create is idempotent).
    kv = await js.create_key_value(bucket=bucket, history=2)
    assert await kv.put("k", b"v") == 1
    # Another configuration under the same name: the stream create fails.
    with pytest.raises(BadRequestError) as exc:
        await js.create_key_value(bucket=bucket, history=4)
    assert (exc.value.code, exc.value.err_code, exc.value.description) == (
        400,
        10058,
        "stream name already in use with a different configuration",
    )

    bound = await js.key_value(bucket)
    assert entry(await bound.get("k")) == (bucket, "k", b"v", 1)

    assert await js.delete_key_value(bucket) is True
    with pytest.raises(BucketNotFoundError):
        await js.key_value(bucket)
    with pytest.raises(BucketNotFoundError):
        await js.key_value(names.bucket())

    # Checked by nats-py before any request.
    with pytest.raises(InvalidBucketNameError):
        await js.create_key_value(bucket="bad.name")
    with pytest.raises(KeyHistoryTooLargeError):
        await js.create_key_value(bucket=names.bucket(), history=65)
