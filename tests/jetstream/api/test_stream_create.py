"""``$JS.API.STREAM.CREATE.<name>``: config echo, defaults, normalisation and every error."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

C = "$JS.API.STREAM.CREATE."
SEC = 1_000_000_000
MS = 1_000_000

# Configs that are accepted (each is created, then read back with STREAM.INFO, then created
# again, which must be idempotent). ``storage`` is added by the test (both storages).
VALID: dict[str, dict[str, Any]] = {
    "minimal": {},
    "subject_literal": {"subjects": ["foo"]},
    "subject_pwc": {"subjects": ["foo.*"]},
    "subject_fwc": {"subjects": ["foo.>"]},
    "subjects_many": {"subjects": ["foo", "bar.*", "baz.>"]},
    "subjects_literal_and_wildcard_below": {"subjects": ["foo", "foo.*"]},
    "subject_star_only": {"subjects": ["*"]},
    "subject_name_and_other": {"subjects": ["S", "T"]},
    "subject_empty_list": {"subjects": []},
    "subject_null": {"subjects": None},
    "subject_js_event_literal": {"subjects": ["$JS.EVENT.foo"]},
    "subject_dollar_js_alone": {"subjects": ["$JS"]},
    "subject_dollar_sys_alone": {"subjects": ["$SYS"]},
    "subject_kv_like": {"subjects": ["$KV.b.>"]},
    "subject_inbox": {"subjects": ["_INBOX.>"]},
    "subject_unicode": {"subjects": ["é.ü"]},
    "retention_limits": {"retention": "limits"},
    "retention_interest": {"retention": "interest"},
    "retention_workqueue": {"retention": "workqueue"},
    "workqueue_discard_new": {"retention": "workqueue", "discard": "new"},
    "max_msgs": {"max_msgs": 10},
    "max_bytes": {"max_bytes": 1024},
    "max_age_1s": {"max_age": SEC},
    "max_age_100ms": {"max_age": 100 * MS},
    "max_age_200ms_dupe_default": {"max_age": 200 * MS},
    "max_age_dupe_zero": {"max_age": 100 * MS, "duplicate_window": 0},
    "max_age_dupe_equal": {"max_age": 100 * MS, "duplicate_window": 100 * MS},
    "max_age_long_dupe_default": {"max_age": 3600 * SEC},
    "dupe_window_5s": {"duplicate_window": 5 * SEC},
    "dupe_window_explicit_default": {"duplicate_window": 120 * SEC},
    "dupe_window_with_larger_age": {"duplicate_window": 5 * SEC, "max_age": 10 * SEC},
    "max_msgs_per_subject": {"max_msgs_per_subject": 5},
    "max_msg_size": {"max_msg_size": 100},
    "max_msg_size_above_max_payload": {"max_msg_size": 2_000_000},
    "max_msg_size_above_max_bytes": {"max_bytes": 10, "max_msg_size": 100},
    "max_consumers": {"max_consumers": 10},
    "discard_new": {"discard": "new"},
    "discard_old": {"discard": "old"},
    "discard_new_max_msgs": {"discard": "new", "max_msgs": 3, "max_bytes": 1000},
    "discard_new_per_subject": {"discard": "new", "max_msgs_per_subject": 1, "discard_new_per_subject": True},
    "discard_new_per_subject_wq": {
        "retention": "workqueue",
        "discard": "new",
        "max_msgs_per_subject": 1,
        "discard_new_per_subject": True,
    },
    "allow_direct": {"allow_direct": True},
    "allow_direct_false": {"allow_direct": False},
    "allow_rollup_hdrs": {"allow_rollup_hdrs": True},
    "deny_delete": {"deny_delete": True},
    "deny_purge": {"deny_purge": True},
    "deny_both": {"deny_delete": True, "deny_purge": True},
    "sealed_false": {"sealed": False},
    "metadata_user": {"metadata": {"b": "1", "a": "2", "_x": "y"}},
    "metadata_empty": {"metadata": {}},
    "metadata_overrides_reserved": {"metadata": {"_nats.ver": "x", "_nats.level": "9", "z": "1"}},
    "metadata_req_level": {"metadata": {"_nats.req.level": "0"}},
    "description": {"description": "a stream"},
    "description_escaped": {"description": '<a&b> "q" \\ é \u2028'},
    "description_empty": {"description": ""},
    "description_4096": {"description": "d" * 4096},
    "no_ack": {"no_ack": True},
    "num_replicas_0": {"num_replicas": 0},
    "num_replicas_1": {"num_replicas": 1},
    "zero_limits": {
        "max_msgs": 0,
        "max_bytes": 0,
        "max_msgs_per_subject": 0,
        "max_msg_size": 0,
        "max_consumers": 0,
        "max_age": 0,
    },
    "minus_one_limits": {
        "max_msgs": -1,
        "max_bytes": -1,
        "max_msgs_per_subject": -1,
        "max_msg_size": -1,
        "max_consumers": -1,
    },
    "negative_limits": {
        "max_msgs": -5,
        "max_bytes": -3,
        "max_msgs_per_subject": -2,
        "max_msg_size": -7,
        "max_consumers": -9,
    },
    "compression_s2": {"compression": "s2"},
    "compression_none": {"compression": "none"},
    "first_seq": {"first_seq": 100},
    "allow_msg_ttl": {"allow_msg_ttl": True},
    "subject_delete_marker_ttl": {"allow_msg_ttl": True, "subject_delete_marker_ttl": SEC},
    "placement_empty": {"placement": {}},
    "all_defaults_spelled_out": {
        "subjects": ["S"],
        "retention": "limits",
        "max_consumers": -1,
        "max_msgs": -1,
        "max_bytes": -1,
        "max_age": 0,
        "max_msgs_per_subject": -1,
        "max_msg_size": -1,
        "discard": "old",
        "num_replicas": 1,
        "duplicate_window": 120 * SEC,
        "compression": "none",
        "allow_direct": False,
        "mirror_direct": False,
        "sealed": False,
        "deny_delete": False,
        "deny_purge": False,
        "allow_rollup_hdrs": False,
        "consumer_limits": {},
        "allow_msg_ttl": False,
    },
    "everything": {
        "description": "all of it",
        "subjects": ["a.>", "b"],
        "max_msgs": 100,
        "max_bytes": 100_000,
        "max_age": 60 * SEC,
        "max_msgs_per_subject": 10,
        "max_msg_size": 1000,
        "max_consumers": 5,
        "discard": "new",
        "discard_new_per_subject": True,
        "duplicate_window": 30 * SEC,
        "allow_direct": True,
        "allow_rollup_hdrs": True,
        "deny_delete": True,
        "metadata": {"owner": "me"},
    },
}


async def check_created(pair, name: str, body: Any) -> Any:
    """Create, read back, create again (idempotent), and list the names."""
    created = await pair.same(C + name, body)
    assert created.get("did_create") is True, created
    await pair.info(name)
    again = await pair.same(C + name, body)
    assert again.get("did_create") is True, again
    await pair.same("$JS.API.STREAM.NAMES")
    return created


@pytest.mark.parametrize("config", list(VALID.values()), ids=list(VALID))
async def test_create_valid(pair, storage, config) -> None:
    await check_created(pair, "S", {"name": "S", "storage": storage, **config})


async def test_create_without_storage_is_file(pair) -> None:
    got = await check_created(pair, "S", {"name": "S"})
    assert got["config"]["storage"] == "file"
    assert got["config"]["subjects"] == ["S"]


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"name": "S", "subjects": [">"], "no_ack": True}, id="full_wildcard_no_ack"),
        pytest.param({"name": "S", "subjects": ["$JS.API.>"], "no_ack": True}, id="js_api_no_ack"),
        pytest.param({"name": "S", "subjects": ["*.>"], "no_ack": True}, id="pwc_fwc_no_ack"),
    ],
)
async def test_create_capture_everything(pair, body) -> None:
    """Only the create reply, without its state: such a stream also stores the server's own
    advisories (``$JS.EVENT.ADVISORY.STREAM.CREATED.S``) and our later requests, racily."""
    emu, real = await pair.request(C + "S", body)
    racy = re.compile(r'"state":\{[^}]*\}')
    assert racy.sub("<state>", emu) == racy.sub("<state>", real)
    assert '"did_create":true' in real, real


# Bodies (raw bytes or JSON) that are rejected; the subject name is "S" unless given.
INVALID: dict[str, tuple[str, Any]] = {
    "empty_body": ("S", b""),
    "empty_object": ("S", b"{}"),
    "null": ("S", b"null"),
    "name_mismatch": ("S", {"name": "T"}),
    "name_case_mismatch": ("S", {"name": "s"}),
    "invalid_json": ("S", b"{"),
    "invalid_json_garbage": ("S", b"not json"),
    "trailing_garbage": ("S", b'{"name":"S"} x'),
    "second_value_other_name": ("S", b'{"name":"S"}{"name":"T"}'),
    "array": ("S", b"[]"),
    "string": ("S", b'"S"'),
    "unknown_field": ("S", {"name": "S", "foo": 1}),
    "unknown_nested_field": ("S", {"name": "S", "consumer_limits": {"bogus": 1}}),
    "wrong_type_max_msgs": ("S", {"name": "S", "max_msgs": "10"}),
    "float_max_msgs": ("S", {"name": "S", "max_msgs": 1.5}),
    "max_msgs_overflow": ("S", b'{"name":"S","max_msgs":9223372036854775808}'),
    "max_msgs_exponent": ("S", b'{"name":"S","max_msgs":1e3}'),
    "wrong_type_name": ("S", {"name": 5}),
    "wrong_type_subjects": ("S", {"name": "S", "subjects": "foo"}),
    "wrong_type_bool": ("S", {"name": "S", "allow_direct": "yes"}),
    "storage_capitalised": ("S", {"name": "S", "storage": "Memory"}),
    "storage_bogus": ("S", {"name": "S", "storage": "bogus"}),
    "retention_bogus": ("S", {"name": "S", "retention": "bogus"}),
    "discard_bogus": ("S", {"name": "S", "discard": "bogus"}),
    "compression_bogus": ("S", {"name": "S", "compression": "zstd"}),
    "compression_empty": ("S", {"name": "S", "compression": ""}),
    "max_age_too_small": ("S", {"name": "S", "max_age": 1000}),
    "max_age_99ms": ("S", {"name": "S", "max_age": 100 * MS - 1}),
    "max_age_negative": ("S", {"name": "S", "max_age": -1}),
    "dupe_window_too_small": ("S", {"name": "S", "duplicate_window": 1}),
    "dupe_window_negative": ("S", {"name": "S", "duplicate_window": -1}),
    "dupe_window_above_max_age": ("S", {"name": "S", "duplicate_window": 5 * SEC, "max_age": SEC}),
    "mirror_direct_without_mirror": ("S", {"name": "S", "mirror_direct": True}),
    "sealed_on_create": ("S", {"name": "S", "sealed": True}),
    "num_replicas_3": ("S", {"name": "S", "num_replicas": 3}),
    "num_replicas_6": ("S", {"name": "S", "num_replicas": 6}),
    "num_replicas_negative": ("S", {"name": "S", "num_replicas": -1}),
    "discard_new_per_subject_without_new": ("S", {"name": "S", "discard_new_per_subject": True}),
    "discard_new_per_subject_without_limit": (
        "S",
        {"name": "S", "discard_new_per_subject": True, "discard": "new"},
    ),
    "description_too_long": ("S", {"name": "S", "description": "d" * 4097}),
    "subject_full_wildcard": ("S", {"name": "S", "subjects": [">"]}),
    "subject_js_api": ("S", {"name": "S", "subjects": ["$JS.API.>"]}),
    "subject_js_api_literal": ("S", {"name": "S", "subjects": ["$JS.API.FOO"]}),
    "subject_js_api_two_tokens": ("S", {"name": "S", "subjects": ["$JS.API"]}),
    "subject_js_all": ("S", {"name": "S", "subjects": ["$JS.>"]}),
    "subject_js_ack": ("S", {"name": "S", "subjects": ["$JS.ACK.>"]}),
    "subject_js_pwc": ("S", {"name": "S", "subjects": ["$JS.*.>"]}),
    "subject_pwc_pwc": ("S", {"name": "S", "subjects": ["*.*"]}),
    "subject_sys": ("S", {"name": "S", "subjects": ["$SYS.>"]}),
    "subject_empty_token": ("S", {"name": "S", "subjects": ["a..b"]}),
    "subject_empty": ("S", {"name": "S", "subjects": [""]}),
    "subject_space": ("S", {"name": "S", "subjects": ["foo bar"]}),
    "subject_trailing_dot": ("S", {"name": "S", "subjects": ["foo."]}),
    "subject_fwc_not_last": ("S", {"name": "S", "subjects": ["foo.>.bar"]}),
    "subjects_duplicate": ("S", {"name": "S", "subjects": ["bar", "bar"]}),
    "subjects_overlap_pwc": ("S", {"name": "S", "subjects": ["bar.*", "bar.a"]}),
    "subjects_overlap_fwc": ("S", {"name": "S", "subjects": ["foo.*", "foo.>"]}),
    "subjects_overlap_deep": ("S", {"name": "S", "subjects": ["foo.*.>", "foo.a.b"]}),
    "rollup_with_deny_purge": ("S", {"name": "S", "allow_rollup_hdrs": True, "deny_purge": True}),
    "mirror_with_subjects": ("S", {"name": "S", "subjects": ["a"], "mirror": {"name": "X"}}),
    "name_star_token": ("a*", {"name": "a*"}),
    "name_star": ("*", {"name": "*"}),
    "name_gt": (">", {"name": ">"}),
    "name_gt_suffix": ("a>", {"name": "a>"}),
    "name_backslash": ("a\\b", {"name": "a\\b"}),
    "name_slash": ("a/b", {"name": "a/b"}),
    "name_space_in_body": ("ab", {"name": "a b"}),
    "name_too_long": ("y" * 256, {"name": "y" * 256}),
}


@pytest.mark.parametrize(("name", "body"), list(INVALID.values()), ids=list(INVALID))
async def test_create_invalid(pair, name, body) -> None:
    got = await pair.same(C + name, body)
    assert "error" in got, got
    await pair.same("$JS.API.STREAM.NAMES")


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b'{"NAME":"S","Max_Msgs":5}', id="keys_case_insensitive"),
        pytest.param(b'{"name":"S","max_msgs":1,"max_msgs":2}', id="duplicate_key_last_wins"),
        pytest.param(b'{"name":"S"}{"name":"S"}', id="two_values"),
        pytest.param(b' \r\n\t{"name":"S"} \n', id="whitespace"),
        pytest.param(b'{"name":"S","placement":{"cluster":"x"}}', id="placement_cluster"),
    ],
)
async def test_create_lenient_json(pair, body) -> None:
    got = await pair.same(C + "S", body)
    if "error" not in got:
        await pair.info("S")


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("x" * 255, id="255_chars"),
        pytest.param("é", id="unicode"),
        pytest.param("a-b_c", id="dash_underscore"),
        pytest.param("$weird", id="dollar"),
        pytest.param("UPPER", id="upper"),
    ],
)
async def test_create_name_accepted(pair, name) -> None:
    await check_created(pair, name, {"name": name})


async def test_create_idempotent_vs_different(pair, storage) -> None:
    body = {"name": "S", "subjects": ["foo.>"], "storage": storage, "max_msgs": 10}
    await pair.same(C + "S", body)
    await pair.same(C + "S", body)
    for change in (
        {"max_msgs": 11},
        {"subjects": ["foo.*"]},
        {"storage": "memory" if storage == "file" else "file"},
        {"allow_direct": True},
        {"metadata": {"a": "1"}},
        {"description": "x"},
        {"max_msgs": 0},
    ):
        got = await pair.same(C + "S", {**body, **change})
        assert got["error"]["err_code"] == 10058, got
    # Equal once normalised: explicit defaults and -1 spelled as other negatives.
    for same in ({"max_bytes": -1}, {"max_bytes": 0}, {"max_bytes": -7}, {"duplicate_window": 120 * SEC}):
        await pair.same(C + "S", {**body, **same})
    await pair.info()


async def test_create_normalised_negative_recreate(pair) -> None:
    await pair.same(C + "S", {"name": "S", "max_msgs": -5})
    await pair.same(C + "S", {"name": "S"})
    await pair.same(C + "S", {"name": "S", "max_msgs": 0})


async def test_create_subjects_overlap_other_stream(pair) -> None:
    await pair.create("A", subjects=["foo.>"])
    cases = [
        ("B", ["foo.a"]),
        ("B", ["foo.*"]),
        ("B", [">"]),
        ("B", ["*.a"]),
        ("B", ["foo.>"]),
        ("B", ["bar", "foo.x.y"]),
        ("B", ["foo"]),  # does not overlap foo.>
        ("C", ["A"]),  # the other stream's name is not one of its subjects
    ]
    for name, subjects in cases:
        await pair.same(C + name, {"name": name, "subjects": subjects})
    await pair.same("$JS.API.STREAM.NAMES")
    # The default subject (the name) of a new stream clashes with an explicit subject.
    await pair.create("D", subjects=["E"])
    await pair.same(C + "E", {"name": "E"})


async def test_create_default_subject_overlap(pair) -> None:
    await pair.create("foo")
    await pair.same(C + "T", {"name": "T", "subjects": ["*"]})
    await pair.same(C + "T", {"name": "T", "subjects": ["foo"]})


@pytest.mark.parametrize("subject", ["$JS.API.STREAM.CREATE", "$JS.API.STREAM.CREATE.a.b", "$JS.API.STREAM.CREATE.*"])
async def test_create_subject_without_single_name_token(pair, subject) -> None:
    """Subjects that do not match ``$JS.API.STREAM.CREATE.*`` as a literal get no reply at all."""
    emu, real = await pair.request(subject, {"name": "a"}, timeout=0.5)
    if subject.endswith("*"):
        assert emu == real
    else:
        assert (emu, real) == ("<timeout>", "<timeout>")


async def test_create_dotted_name_in_body(pair) -> None:
    """A name with a dot can only be asked for under a different single-token subject."""
    got = await pair.same(C + "ab", {"name": "a.b"})
    assert got["error"]["err_code"] == 10056


async def test_create_response_shape(pair) -> None:
    got = await pair.same(C + "S", json.dumps({"name": "S", "subjects": ["foo.>"]}).encode())
    assert list(got) == ["type", "config", "created", "state", "ts", "did_create"]
