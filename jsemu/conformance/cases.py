"""The Direct Get conformance scenarios (declarative; see :mod:`.model` for the vocabulary).

Every scenario exists for file and memory storage (ids end in ``-file`` / ``-memory``) unless
it says otherwise. Notes ``t9 #N`` point at row N of the request→reply table in
``direct-get-behavior.md``. The replies themselves are not written here: they are recorded from
nats-server into ``fixtures.json`` (``python -m tests.conformance.record``).
"""

from __future__ import annotations

from typing import Any

from .model import Delete, Get, Pub, Purge, Scenario, Sleep, Step, Update, body, hdrs

__all__ = ["SCENARIOS", "by_id"]

STORAGES = ("file", "memory")
FAR_PAST = "0001-01-01T00:00:00Z"


def stream(name: str = "S", subjects: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    return {"name": name, "subjects": subjects or ["foo.*"], "allow_direct": True, **extra}


def api_level(value: str) -> bytes:
    return hdrs(f"Nats-Required-Api-Level: {value}")


# --- §9: the fixture of the spec's request -> reply table --------------------------------------

T9_SETUP: list[Step] = [
    Pub("foo.a", b"A1"),
    Pub("foo.b", b"B1"),
    Pub("foo.a", b"A2"),
    Pub("foo.c", b"C1"),
    Pub("foo.b", b"B2"),
    Delete(4),
]


def t9_basic() -> list[Step]:
    return [
        # #1, #2: nothing selecting a message.
        Get(b"", note="t9 #1"),
        Get("{}", note="t9 #2"),
        Get("null", note="t9 #2"),
        Get(body(seq=0), note="t9 #2"),
        Get(body(batch=3), note="t9 #2"),
        Get(body(up_to_seq=3), note="t9 #2"),
        Get(body(multi_last=[]), note="t9 #2"),
        Get(body(no_hdr=True), note="t9 #2"),
        Get(body(max_bytes=5)),
        Get('{"up_to_time":"{ts:3}"}'),
        Get('{"multi_last":null}'),
        Get('{"seq":null}'),
        Get(body(last_by_subj="")),
        Get(body(next_by_subj="")),
        Get(body(batch=0)),
        Get(body(zzz=1)),
        Get('{"SEQ":0}'),
        Get('{"seq":0,"batch":-1}'),
        # #3: decode errors.
        Get("not json", note="t9 #3"),
        Get('{"seq":"1"}', note="t9 #3"),
        Get('{"seq":-1}', note="t9 #3"),
        Get("[1]", note="t9 #3"),
        Get('{"seq":1} x', note="t9 #3"),
        Get('{"seq":1.5}'),
        Get('{"seq":1e2}'),
        Get('{"seq":1E0}'),
        Get('{"seq":1.0}'),
        Get('{"seq":-0}'),
        Get('{"seq":18446744073709551616}'),
        Get('{"seq":99999999999999999999999}'),
        Get('{"seq":true}'),
        Get('{"no_hdr":"true"}'),
        Get('{"no_hdr":1}'),
        Get('{"multi_last":"a"}'),
        Get('{"multi_last":[1]}'),
        Get('{"last_by_subj":1}'),
        Get('{"batch":1.0,"seq":1}'),
        Get('{"batch":9223372036854775808,"seq":1}'),
        Get('{"max_bytes":"1","seq":1}'),
        Get('"str"'),
        Get("123"),
        Get("true"),
        Get(b"   "),
        Get(b"\r\n"),
        Get('{"seq":1}{"seq":2}'),
        Get('{"seq":1,}'),
        Get('{"seq":01}'),
        Get("{'seq':1}"),
        Get('{"seq":1'),
        Get("{seq:1}"),
        Get(b'{"seq":1,"x":"\xff"}', note="invalid UTF-8 in an ignored value"),
        Get(b'{"seq":1\x00}'),
        # #4, #5: by sequence.
        Get(body(seq=1), note="t9 #4"),
        Get(body(seq=4), note="t9 #5 deleted"),
        Get(body(seq=6), note="t9 #5"),
        Get(body(seq=999), note="t9 #5"),
        Get('{"seq":18446744073709551615}'),
        Get(b'  {"seq":2}  \r\n\t', note="surrounding whitespace"),
        Get('{"seq":2,"zzz":{"deep":[1,2,{"x":null}]}}', note="unknown keys ignored"),
        # Go's decoding: case-insensitive keys (with Unicode folding), escapes, duplicates, null.
        Get('{"SEQ":1}'),
        Get('{"Seq":2}'),
        Get('{"\\u0073eq":3}'),
        Get('{"ſeq":2}', note="U+017F folds to s"),
        Get('{"laſt_by_ſubj":"foo.a"}'),
        Get('{"LAST_BY_SUBJ":"foo.b"}'),
        Get('{"last_by_subj":"foo.\\u0061"}'),
        Get('{"seq":1,"seq":2}'),
        Get('{"seq":1,"SEQ":3}'),
        Get('{"seq":2,"seq":null}', note="null leaves a non-pointer field as it was"),
        Get('{"start_time":"{ts:3}","start_time":null}', note="null resets a pointer field"),
        Get('{"multi_last":["foo.a"],"multi_last":null,"seq":1}'),
        Get('{"last_by_subj":null,"seq":1}'),
        Get('{"no_hdr":null,"seq":1}'),
        Get(b'{"last_by_subj":"foo.\xff"}', note="invalid UTF-8 becomes U+FFFD"),
        # #6 - #9: last by subject.
        Get(body(last_by_subj="foo.a"), note="t9 #6"),
        Get(body(last_by_subj="foo.*"), note="t9 #7"),
        Get(body(last_by_subj=">"), note="t9 #8"),
        Get(body(last_by_subj="foo.>")),
        Get(body(last_by_subj="*.a")),
        Get(body(last_by_subj="*")),
        Get(body(last_by_subj="foo.c"), note="t9 #9"),
        Get(body(last_by_subj="bar"), note="t9 #9"),
        Get(body(last_by_subj="foo")),
        Get(body(last_by_subj="foo.a.x")),
        Get(body(last_by_subj="foo.a", no_hdr=True)),
        Get(body(last_by_subj="foo.a", max_bytes=1)),
        Get(body(last_by_subj="foo.a", up_to_seq=1), note="t9 #51"),
        Get('{"last_by_subj":"foo.a","up_to_time":"{ts:1}"}'),
        Get(body(last_by_subj="foo.a", batch=0)),
        # #10 - #12: next by subject.
        Get(body(next_by_subj="foo.b"), note="t9 #10"),
        Get(body(seq=3, next_by_subj="foo.b"), note="t9 #11"),
        Get(body(seq=6, next_by_subj="foo.b"), note="t9 #12"),
        Get(body(seq=0, next_by_subj="foo.b")),
        Get(body(seq=1, next_by_subj="foo.b")),
        Get(body(next_by_subj="foo.c")),
        Get(body(seq=4, next_by_subj="foo.*")),
        Get(body(seq=3, next_by_subj=">")),
        Get(body(next_by_subj="*")),
        Get(body(seq=2, next_by_subj="foo.a", no_hdr=True)),
        # #13: conflicting options.
        Get(body(seq=1, last_by_subj="foo.a"), note="t9 #13"),
        Get(body(last_by_subj="a", next_by_subj="a"), note="t9 #13"),
        Get(body(last_by_subj="foo.a", batch=2), note="t9 #13"),
        Get('{"seq":1,"start_time":"{ts:1}"}', note="t9 #13"),
        Get('{"start_time":"{ts:1}","last_by_subj":"a"}', note="t9 #13"),
        Get(body(multi_last=["a"], next_by_subj="a"), note="t9 #13"),
        Get(body(multi_last=["a"], last_by_subj="a"), note="t9 #13"),
        Get('{"multi_last":["a"],"up_to_seq":1,"up_to_time":"{ts:1}"}', note="t9 #13"),
        Get('{"seq":1,"up_to_seq":1,"up_to_time":"{ts:1}"}', note="up_to both, non-multi"),
        Get(body(seq=1, last_by_subj="foo.a", batch=2, next_by_subj="x")),
        Get('{"last_by_subj":"foo.a","batch":-1}', note="accepted: EOB only"),
        Get('{"last_by_subj":"foo.a","batch":-1,"max_bytes":1}'),
        # #49: no reply subject.
        Get(body(seq=1), reply=False, silent=True, note="t9 #49"),
        Get(b"", key="foo.a", reply=False, silent=True, note="t9 #49"),
    ]


def t9_time() -> list[Step]:
    return [
        Get('{"start_time":"{ts:1-1}"}', note="t9 #14"),
        Get('{"start_time":"{ts:1}"}'),
        Get('{"start_time":"{ts:1+1}"}'),
        Get('{"start_time":"{ts:3}"}', note="t9 #15"),
        Get('{"start_time":"{ts:3-1}"}'),
        Get('{"start_time":"{ts:3+1}"}', note="next is deleted 4: seq 5"),
        Get('{"start_time":"{ts:4}"}', note="timestamp of the deleted seq 4"),
        Get('{"start_time":"{ts:5}"}'),
        Get('{"start_time":"{ts:5+1}"}', note="t9 #16"),
        Get('{"start_time":"{ts:5+1}","next_by_subj":"foo.a","batch":1}', note="t9 #17"),
        Get('{"start_time":"{ts:1}","next_by_subj":"foo.b"}'),
        Get('{"start_time":"{ts:3+1}","next_by_subj":"foo.a"}'),
        Get('{"start_time":"{ts:2}","no_hdr":true}'),
        Get('{"start_time":"{ts:3@+02:00}"}', note="offset form"),
        Get('{"start_time":"{ts:3+1@-05:30}"}'),
        Get('{"start_time":"{ts:3!9}"}', note="untrimmed fraction"),
        Get('{"start_time":"{ts:3+1!9}"}'),
        Get('{"start_time":"2000-01-01T00:00:00Z"}'),
        Get('{"start_time":"2000-01-01T00:00:00.123456789123Z"}', note="more than 9 digits"),
        Get('{"start_time":"2000-01-01T00:00:00.Z"}'),
        Get('{"start_time":"2000-01-01t00:00:00z"}', note="lower-case t and z"),
        Get('{"start_time":"2000-01-01 00:00:00Z"}'),
        Get('{"start_time":"2000-01-01T00:00:00"}', note="no zone"),
        Get('{"start_time":"2000-01-01T00:00:00+0000"}'),
        Get('{"start_time":"2000-01-01T24:00:00Z"}'),
        Get('{"start_time":"2000-02-30T00:00:00Z"}'),
        Get('{"start_time":"2000-01-01T00:00:00+24:00"}'),
        Get('{"start_time":"2000-01-01"}'),
        Get('{"start_time":""}'),
        Get('{"start_time":123}'),
        Get('{"start_time":"yesterday"}'),
        Get('{"start_time":"' + FAR_PAST + '"}', note="Go zero time"),
        Get('{"start_time":"1677-01-01T00:00:00Z"}', note="UnixNano wraps"),
        Get('{"start_time":"1970-01-01T00:00:00Z"}'),
        Get('{"start_time":"2200-01-01T00:00:00Z"}'),
        Get('{"start_time":"2263-01-01T00:00:00Z"}', note="UnixNano wraps"),
        Get('{"start_time":"9999-12-31T23:59:59.999999999Z"}', note="UnixNano wraps"),
        Get('{"start_time":"{ts:1-1}","batch":10}'),
        Get('{"start_time":"{ts:2}","batch":2}'),
        Get('{"start_time":"{ts:3+1}","batch":10,"next_by_subj":"foo.b"}'),
        Get('{"start_time":"{ts:5+1}","batch":2}'),
        Get('{"start_time":"' + FAR_PAST + '","batch":2}'),
        Get('{"start_time":"2263-01-01T00:00:00Z","batch":2}'),
    ]


def t9_batch() -> list[Step]:
    return [
        Get(body(seq=1, batch=10), note="t9 #18"),
        Get(body(seq=4, batch=2), note="t9 #19"),
        Get(body(seq=1, batch=1), note="t9 #20"),
        Get(body(next_by_subj="foo.*", batch=2), note="t9 #21"),
        Get(body(seq=1, batch=2, next_by_subj="foo.a"), note="t9 #22"),
        Get(body(seq=1, batch=10, max_bytes=1), note="t9 #23"),
        Get(body(seq=1, batch=3, no_hdr=True), note="t9 #24"),
        Get(body(seq=6, batch=5), note="t9 #25"),
        Get(body(last_by_subj="foo.a", batch=-1), note="t9 #26"),
        Get(body(seq=1, batch=-1), note="t9 #27"),
        Get(body(seq=3, batch=-5)),
        Get(body(next_by_subj="foo.a", batch=-1)),
        Get(body(seq=5, batch=3)),
        Get(body(seq=2, batch=2)),
        Get(body(seq=1, batch=2147483648)),
        Get(body(seq=1, batch=1, no_hdr=True)),
        Get(body(seq=1, batch=10, no_hdr=True, next_by_subj="foo.b")),
        Get(body(seq=3, batch=2, next_by_subj="foo.c")),
        Get(body(seq=4, batch=5, next_by_subj="foo.b"), note="later load fails: EOB"),
        Get(body(next_by_subj=">", batch=3)),
        Get(body(next_by_subj="foo.>", batch=3, seq=2)),
        # max_bytes counts subject + stored header + payload ("foo.a"+"A1" = 7) with >=.
        Get(body(seq=1, batch=10, max_bytes=7)),
        Get(body(seq=1, batch=10, max_bytes=8)),
        Get(body(seq=1, batch=10, max_bytes=14)),
        Get(body(seq=1, batch=10, max_bytes=15)),
        Get(body(seq=1, batch=10, max_bytes=-1)),
        Get(body(seq=1, batch=10, max_bytes=0)),
        Get(body(seq=1, batch=10, max_bytes=9223372036854775807)),
        Get(body(seq=1, batch=10, max_bytes=-9223372036854775808)),
        Get(body(seq=1, max_bytes=1)),
        Get('{"seq":1,"batch":2,"up_to_seq":1}'),
        Get('{"seq":1,"batch":2,"up_to_time":"{ts:1}"}'),
    ]


def t9_multi() -> list[Step]:
    return [
        Get(body(multi_last=["foo.*"]), note="t9 #28"),
        Get(body(multi_last=["foo.*"], up_to_seq=2), note="t9 #29"),
        Get(body(multi_last=["foo.a", "foo.*"]), note="t9 #30"),
        Get(body(multi_last=["foo.*"], batch=1), note="t9 #31"),
        Get(body(multi_last=["foo.*"], seq=4), note="t9 #32"),
        Get(body(multi_last=["foo.*"], seq=6), note="t9 #33"),
        Get(body(multi_last=["foo.*"], up_to_seq=99), note="t9 #34"),
        Get(body(multi_last=["foo.*"], up_to_seq=6)),
        Get(body(multi_last=["foo.*"], up_to_seq=5)),
        Get(body(multi_last=["foo.*"], up_to_seq=4), note="4 is deleted"),
        Get(body(multi_last=["foo.*"], up_to_seq=1)),
        Get(body(multi_last=["bar.*"]), note="t9 #35"),
        Get(body(multi_last=["foo.c"]), note="t9 #35"),
        Get('{"multi_last":["foo.*"],"up_to_time":"{ts:1}"}', note="t9 #36"),
        Get('{"multi_last":["foo.*"],"up_to_time":"{ts:3}"}', note="t9 #37"),
        Get(body(multi_last=["foo.*"], no_hdr=True), note="t9 #38"),
        Get('{"multi_last":["foo.*"],"start_time":"{ts:5+1}"}', note="t9 #39"),
        Get('{"multi_last":["foo.*"],"up_to_time":"{ts:1-1}"}'),
        Get('{"multi_last":["foo.*"],"up_to_time":"{ts:1+1}"}'),
        Get('{"multi_last":["foo.*"],"up_to_time":"{ts:3-1}"}'),
        Get('{"multi_last":["foo.*"],"up_to_time":"{ts:3+1}"}'),
        Get('{"multi_last":["foo.*"],"up_to_time":"{ts:4}"}', note="deleted seq's time"),
        Get('{"multi_last":["foo.*"],"up_to_time":"{ts:5}"}'),
        Get('{"multi_last":["foo.*"],"up_to_time":"{ts:5+1}"}'),
        Get('{"multi_last":["foo.*"],"up_to_time":"' + FAR_PAST + '"}'),
        Get('{"multi_last":["foo.*"],"up_to_time":"2200-01-01T00:00:00Z"}'),
        Get('{"multi_last":["foo.*"],"up_to_time":"2263-01-01T00:00:00Z"}'),
        Get('{"multi_last":["foo.*"],"up_to_time":"{ts:3@+01:00}"}'),
        Get('{"multi_last":["foo.*"],"up_to_time":"nope"}'),
        Get(body(multi_last=["foo.a", "foo.a"])),
        Get(body(multi_last=["foo.b", "foo.a"])),
        Get(body(multi_last=[">"])),
        Get(body(multi_last=["*"])),
        Get(body(multi_last=["foo.>", "bar"])),
        Get(body(multi_last=[""])),
        Get('{"multi_last":[null]}'),
        Get('{"multi_last":["foo.a",null]}'),
        Get(body(multi_last=["foo..a"])),
        Get(body(multi_last=["foo.*"], batch=-1)),
        Get(body(multi_last=["foo.*"], batch=0)),
        Get(body(multi_last=["foo.*"], max_bytes=1)),
        Get(body(multi_last=["foo.*"], max_bytes=-1)),
        Get(body(multi_last=["foo.*"], max_bytes=7)),
        Get(body(multi_last=["foo.*"], max_bytes=8)),
        Get(body(multi_last=["foo.b"], seq=3)),
        Get(body(multi_last=["foo.b"], seq=5)),
        Get(body(multi_last=["foo.*"], seq=3, batch=1)),
        Get(body(multi_last=["foo.*"], seq=1, up_to_seq=3, batch=1), note="paging, page 1"),
        Get(body(multi_last=["foo.*"], seq=2, up_to_seq=3, batch=1), note="not a page boundary (pages go by LS+1)"),
        Get(body(multi_last=["foo.*"], seq=3, up_to_seq=3, batch=1), note="paging, page 2 (seq = LS+1)"),
        Get(body(multi_last=["foo.*"], up_to_seq=2, no_hdr=True, batch=5)),
        Get('{"multi_last":["foo.*"],"MULTI_LAST":["foo.a"]}'),
        Get('{"MuLtI_LaSt":["foo.b"],"Up_To_Seq":2}'),
    ]


def t9_api_level_and_appended() -> list[Step]:
    return [
        # #41: Nats-Required-Api-Level (nats-server 2.15.1 is at level 5).
        Get(body(seq=1), hdr=api_level("999"), note="t9 #41"),
        Get(body(seq=1), hdr=api_level("abc"), note="t9 #41"),
        Get(body(seq=1), hdr=api_level("6")),
        Get(body(seq=1), hdr=api_level("5")),
        Get(body(seq=1), hdr=api_level("0")),
        Get(body(seq=1), hdr=api_level("-1")),
        Get(body(seq=1), hdr=api_level("+5")),
        Get(body(seq=1), hdr=api_level("05")),
        Get(body(seq=1), hdr=api_level(" 6")),
        Get(body(seq=1), hdr=api_level(" 5"), note="leading blank"),
        Get(body(seq=1), hdr=api_level("\t5"), note="leading tab"),
        Get(body(seq=1), hdr=api_level("5 ")),
        Get(body(seq=1), hdr=api_level("")),
        Get(body(seq=1), hdr=api_level("99999999999999999999")),
        Get(body(seq=1), hdr=hdrs("nats-required-api-level: 999"), note="key is case-sensitive"),
        Get(body(seq=1), hdr=hdrs("Nats-Required-Api-Level: 1", "Nats-Required-Api-Level: 999")),
        Get(body(seq=1), hdr=hdrs("Nats-Required-Api-Level: 999", "Nats-Required-Api-Level: 1")),
        Get(body(seq=1), hdr=hdrs("Nats-Required-Api-Level:999")),
        Get(b"", hdr=api_level("999"), note="412 before the empty check"),
        Get("not json", hdr=api_level("999")),
        Get(b"", hdr=api_level("1")),
        Get(body(seq=1), hdr=hdrs("Foo: bar")),
        Get(body(seq=1), hdr=hdrs()),
        Get(body(seq=1), hdr=hdrs("Foo: bar", status="503 x")),
        Get(body(multi_last=["foo.*"]), hdr=api_level("999")),
        Get(b"", key="foo.a", hdr=api_level("999")),
        Get(b"", key="foo.a", hdr=api_level("5")),
        Get("oops", key="foo.a", hdr=api_level("x")),
        # #42 - #48: the subject-appended endpoint.
        Get(b"", key="foo.a", note="t9 #42"),
        Get(body(no_hdr=True), key="foo.a", note="t9 #43"),
        Get("{}", key="foo.a", note="t9 #44"),
        Get(body(max_bytes=5), key="foo.a", note="t9 #44"),
        Get(body(zzz=1), key="foo.a", note="t9 #44"),
        Get("null", key="foo.a"),
        Get(body(seq=0), key="foo.a"),
        Get(body(multi_last=[]), key="foo.a"),
        Get('{"seq":null,"no_hdr":false}', key="foo.a"),
        Get('{"NO_HDR":true}', key="foo.b"),
        Get(body(seq=1), key="foo.a", note="t9 #45"),
        Get(body(batch=1), key="foo.a", note="t9 #45"),
        Get(body(batch=-1), key="foo.a"),
        Get(body(last_by_subj="x"), key="foo.a", note="t9 #45"),
        Get(body(last_by_subj="foo.a"), key="foo.a"),
        Get(body(up_to_seq=1), key="foo.a", note="t9 #45"),
        Get(body(next_by_subj="foo.a"), key="foo.a"),
        Get(body(multi_last=["foo.a"]), key="foo.a"),
        Get('{"start_time":"{ts:1}"}', key="foo.a"),
        Get('{"up_to_time":"{ts:1}"}', key="foo.a"),
        Get("oops", key="foo.a", note="t9 #46"),
        Get(b" ", key="foo.a"),
        Get('{"seq":"1"}', key="foo.a"),
        Get(b"", key="foo.c", note="t9 #47"),
        Get(b"", key="bar", note="t9 #47"),
        Get(b"", key="foo.*", note="t9 #48"),
        Get(b"", key=">"),
        Get(b"", key="*.a"),
        Get(b"", key="foo.>"),
        Get(b"", key="foo"),
        Get(body(no_hdr=True), key="foo.*"),
        Get(b"", key="foo.*", conn="pedantic", note="pedantic publisher of a wildcard subject"),
        Get(b"", subject="$JS.API.DIRECT.GET.S.", note="empty token"),
        Get(b"", subject="$JS.API.DIRECT.GET.S..foo.a", note="empty token"),
        Get(body(seq=1), subject="$JS.API.DIRECT.GET.S.foo.a.", note="empty token"),
        Get(body(seq=1), subject="$JS.API.DIRECT.GET.s", note="stream names are case-sensitive"),
        Get(body(seq=1), subject="$JS.API.DIRECT.GET.*", note="wildcard stream token"),
        Get(body(seq=1), subject="$JS.API.DIRECT.GET.>", note="wildcard stream token"),
        Get(body(seq=1), subject="$JS.API.DIRECT.GET"),
        Get(body(seq=1), subject="$JS.API.DIRECT.GETX.S", note="byte prefix $JS.API.DIRECT.GET: no responders"),
        Get(body(seq=1), subject="$JS.API.DIRECT.GETS"),
        Get(body(seq=1), subject="$JS.API.DIRECT.S", silent=True, note="other $JS.API subjects: silence"),
        Get(body(seq=1), subject="$JS.API.FOO", silent=True),
        Get(body(seq=1), subject="$js.api.direct.get.S"),
    ]


def t9_no_responders() -> list[Step]:
    return [
        # #50: no responders, with and without no_responders in CONNECT.
        Get(body(seq=1), stream="OFF", note="t9 #50 allow_direct false"),
        Get(b"", key="off.a", stream="OFF", note="t9 #50"),
        Get(body(seq=1), stream="NOPE", note="t9 #50 unknown stream"),
        Get(b"", key="foo.a", stream="NOPE", note="t9 #50"),
        Get(body(seq=1), stream="OFF", conn="headers", silent=True, note="t9 #50 (timeout)"),
        Get(body(seq=1), stream="NOPE", conn="headers", silent=True, note="t9 #50 (timeout)"),
        Get(body(seq=1), stream="NOPE", conn="plain", silent=True),
        Get(body(seq=1), stream="OFF", hdr=api_level("999")),
        # A client without header support.
        Get(body(seq=1), conn="plain"),
        Get(body(seq=4), conn="plain"),
        Get(body(seq=1, batch=2), conn="plain"),
        Get(body(multi_last=["foo.*"]), conn="plain"),
        Get(b"", conn="plain"),
        Get(b"", key="foo.b", conn="plain"),
        Get(body(seq=1), conn="headers"),
        Get(body(seq=1, batch=2), conn="headers"),
    ]


def t9_scenarios() -> list[tuple[str, list[Step], str]]:
    return [
        ("t9-basic", t9_basic(), "§9 rows 1-13, 49, 51 and Go JSON decoding"),
        ("t9-time", t9_time(), "§9 rows 14-17: start_time, relative to stored timestamps"),
        ("t9-batch", t9_batch(), "§9 rows 18-27: batches, NP/LS, EOB, max_bytes, no_hdr"),
        ("t9-multi", t9_multi(), "§9 rows 28-40: multi_last"),
        ("t9-level-appended", t9_api_level_and_appended(), "§9 rows 41-48: 412 and the subject-appended form"),
        ("t9-noresp", t9_no_responders(), "§9 row 50 and clients without header support"),
    ]


# --- stored headers and payloads -----------------------------------------------------------------

H_DUP = hdrs("Foo: 1", "Foo: 2", "foo: 3")
H_ORIG = hdrs(
    "Nats-Stream: X",
    "Nats-Sequence: 99",
    "Nats-Subject: orig",
    "Nats-Time-Stamp: 2000-01-01T00:00:00Z",
    "Nats-Num-Pending: 7",
    "Nats-Last-Sequence: 8",
    "Nats-UpTo-Sequence: 9",
)
BINARY = bytes(range(256))

HEADER_PUBS: list[Step] = [
    Pub("h.dup", b"dup", H_DUP),  # 1
    Pub("h.status", b"st", hdrs("Foo: bar", status="503 x")),  # 2
    Pub("h.statusonly", b"so", hdrs(status="503 x")),  # 3
    Pub("h.empty", b"eh", hdrs()),  # 4: exactly NATS/1.0\r\n\r\n
    Pub("h.orig", b"orig", H_ORIG),  # 5
    Pub("h.bin", BINARY),  # 6
    Pub("h.nothing", b""),  # 7
    Pub("h.hdronly", b"", hdrs("Only: yes")),  # 8
    Pub("h.crlf", b"a\r\n\r\nb\r\nMSG x 1 2\r\n"),  # 9
    Pub("h.spacing", b"sp", hdrs("Foo:bar", "Baz:   spaced  ", "X-Y_Z: a: b")),  # 10
    Pub("h.msgid", b"id", hdrs("Nats-Msg-Id: m1", "Nats-Expected-Stream: S")),  # 11
    Pub("h.big", b"x" * 1000, hdrs("Big: 1")),  # 12
    Pub("h.emptyempty", b"", hdrs()),  # 13
    Pub("h.reqinfo", b"ri", hdrs('Nats-Request-Info: {"acc":"A"}', "Keep: 1")),  # 14
    Pub("h.status2", b"s2", hdrs("X: y", status="404")),  # 15
    Pub("h.utf8", "ünï €".encode(), hdrs("Name: ünï")),  # 16
    Pub("h.dup", b"dup2", hdrs("Foo: 9")),  # 17
]


def header_steps() -> list[Step]:
    steps: list[Step] = [*HEADER_PUBS]
    steps += [Get(body(seq=n)) for n in range(1, 18)]
    size1 = len("h.dup") + len(H_DUP) + len("dup")
    size2 = len("h.status") + len(hdrs("Foo: bar")) + len("st")
    steps += [
        Get(body(seq=1, batch=20)),
        Get(body(seq=1, batch=20, no_hdr=True)),
        Get(body(seq=4, batch=2, next_by_subj="h.empty")),
        Get(body(multi_last=["h.>"])),
        Get(body(multi_last=["h.>"], no_hdr=True, batch=3)),
        Get(body(multi_last=["h.orig", "h.hdronly", "h.nothing"])),
        Get(body(last_by_subj="h.orig", no_hdr=True)),
        Get(body(last_by_subj="h.dup")),
        Get(body(seq=8, no_hdr=True)),
        Get(body(seq=7, no_hdr=True)),
        Get(body(seq=7, batch=2, no_hdr=True)),
        Get(b"", key="h.orig"),
        Get(b"", key="h.hdronly"),
        Get(body(no_hdr=True), key="h.hdronly"),
        Get(body(no_hdr=True), key="h.bin"),
        Get(b"", key="h.*"),
        # max_bytes counts the stored header: seq 1 is exactly size1.
        Get(body(seq=1, batch=5, max_bytes=size1), note="exactly one message"),
        Get(body(seq=1, batch=5, max_bytes=size1 + 1)),
        Get(body(seq=1, batch=5, max_bytes=size1 - 1)),
        # Seq 2 is stored with "NATS/1.0\r\nFoo: bar\r\n\r\n" (the status is removed): size2 bytes.
        Get(body(multi_last=["h.status", "h.statusonly"], max_bytes=size2), note="exactly one message"),
        Get(body(multi_last=["h.status", "h.statusonly"], max_bytes=size2 + 1)),
        Get(body(seq=1, batch=20), conn="plain"),
    ]
    return steps


# --- subjects: multi-token keys, wildcards, transforms -----------------------------------------------

KV_PUBS: list[Step] = [
    Pub("kv.a", b"1"),
    Pub("kv.a.b", b"2"),
    Pub("kv.a.b.c", b"3"),
    Pub("kv.b.b", b"4"),
    Pub("kv.$x.y", b"5"),
    Pub("kv.a", b"6"),
    Pub("kv.a.b", b"7"),
    Pub("kv.zz", b"8"),
]


def kv_steps() -> list[Step]:
    keys = [
        "kv.a",
        "kv.a.b",
        "kv.a.b.c",
        "kv.$x.y",
        "kv.b.b",
        "kv.a.*",
        "kv.*.b",
        "kv.>",
        "kv.*",
        ">",
        "kv",
        "*.a",
        "kv.a.b.c.d",
        "kv.$x.*",
        "kv.zz",
        "kv.*.*.*",
    ]
    steps: list[Step] = [*KV_PUBS]
    steps += [Get(b"", key=k) for k in keys]
    steps += [
        Get(body(last_by_subj=">")),
        Get(body(last_by_subj="kv.>")),
        Get(body(multi_last=["kv.*"])),
        Get(body(multi_last=["kv.>"])),
        Get(body(multi_last=["kv.a.>", "kv.*.b"])),
        Get(body(multi_last=["kv.>"], up_to_seq=4)),
        Get(body(multi_last=["kv.>"], up_to_seq=6)),
        Get(body(multi_last=["kv.>"], up_to_seq=8)),
        Get(body(multi_last=["kv.>"], seq=6)),
        Get(body(multi_last=["kv.>"], up_to_seq=7, seq=3)),
        Get(body(next_by_subj="kv.*.b", batch=5)),
        Get(body(next_by_subj="kv.a.>", seq=3, batch=5)),
        Delete(8),
        Get(body(last_by_subj=">"), note="last seq deleted: 404 for >"),
        Get(body(last_by_subj="kv.>")),
        Get(b"", key=">"),
        Get(b"", key="kv.>"),
        Get(body(seq=1, batch=100)),
        Get(body(multi_last=["kv.>"])),
        Get(body(multi_last=["kv.zz"])),
        Get(body(multi_last=["kv.>"], up_to_seq=8)),
        Get(body(multi_last=["kv.>"], up_to_seq=9)),
        Delete(6),
        Get(body(multi_last=["kv.>"], up_to_seq=7)),
        Get(b"", key="kv.a"),
        Get(body(last_by_subj="kv.a")),
    ]
    return steps


def kvbucket_steps() -> list[Step]:
    """A KV-shaped stream, as nats.go / nats.py create it."""
    return [
        Pub("$KV.b.k1", b"v1"),
        Pub("$KV.b.k2", b"v2"),
        Pub("$KV.b.k1", b"v1b"),
        Pub("$KV.b.k3", b"", hdrs("KV-Operation: DEL")),
        Pub("$KV.b.k2", b"", hdrs("KV-Operation: PURGE", "Nats-Rollup: sub")),
        Get(b"", stream="KV_b", key="$KV.b.k1"),
        Get(b"", stream="KV_b", key="$KV.b.k2"),
        Get(b"", stream="KV_b", key="$KV.b.k3"),
        Get(b"", stream="KV_b", key="$KV.b.nope"),
        Get(b"", stream="KV_b", key="$KV.b.*"),
        Get(body(seq=1), stream="KV_b"),
        Get(body(seq=2), stream="KV_b", note="rolled up"),
        Get(body(multi_last=["$KV.b.>"]), stream="KV_b"),
        Get(body(seq=1, batch=10), stream="KV_b"),
        Get(body(seq=1, batch=10, next_by_subj="$KV.b.k1"), stream="KV_b"),
        Get(body(seq=1), subject="$JS.API.DIRECT.GET.KV_B"),
    ]


def transform_steps() -> list[Step]:
    return [
        Pub("in.a", b"1"),
        Pub("in.b", b"2", hdrs("H: 1")),
        Pub("in.a", b"3"),
        Get(body(seq=1), stream="T"),
        Get(body(seq=2), stream="T"),
        Get(body(last_by_subj="out.a"), stream="T"),
        Get(body(last_by_subj="in.a"), stream="T"),
        Get(b"", stream="T", key="out.a"),
        Get(b"", stream="T", key="in.a"),
        Get(body(multi_last=["out.*"]), stream="T"),
        Get(body(seq=1, batch=5, next_by_subj="out.b"), stream="T"),
    ]


def partial_wildcard_steps() -> list[Step]:
    """Filters with ``*`` or ``>`` inside a token are literal subjects, but multi_last (the
    subject tree matcher) treats some of them as prefix wildcards."""
    subjects = ["m.01", "m.02", "m.10", "m.100", "m.x0", "m.0", "n.01.a", "n.02.b"]
    filters = [
        "m.0*",
        "m.*0",
        "m.1*0",
        "m*",
        "m.0>",
        "m.1>",
        "n.0*",
        "n.0*.a",
        "n.0>",
        "m.0**",
        "*.01",
        "m.0*.x",
        "m.>x",
        "m.*x",
        "m.1*",
        "m.10>",
    ]
    steps: list[Step] = [Pub(s, s.encode()) for s in subjects]
    for f in filters:
        steps += [
            Get(body(multi_last=[f])),
            Get(body(last_by_subj=f)),
            Get(body(next_by_subj=f, seq=1, batch=10)),
            Get(b"", key=f),
        ]
    steps += [Get(body(multi_last=["m.0*", "m.1*"])), Get(body(multi_last=["m.0*"], up_to_seq=6))]
    return steps


def history_steps() -> list[Step]:
    """max_msgs_per_subject 1: older values are gone, so ceilings below a subject's last
    find nothing for that subject."""
    # Sleep(0) ends a group of publishes, so each timestamp is read before the value is replaced.
    return [
        Pub("foo.a", b"a1"),
        Sleep(0),
        Pub("foo.b", b"b1"),
        Sleep(0),
        Pub("foo.a", b"a2"),
        Pub("foo.c", b"c1"),
        Pub("foo.b", b"b2"),
        Get(body(seq=1)),
        Get(body(seq=1, batch=10)),
        Get(body(multi_last=["foo.*"])),
        Get(body(multi_last=["foo.*"], up_to_seq=1)),
        Get(body(multi_last=["foo.*"], up_to_seq=2)),
        Get(body(multi_last=["foo.*"], up_to_seq=3)),
        Get(body(multi_last=["foo.*"], up_to_seq=4)),
        Get(body(multi_last=["foo.a", "foo.b"], up_to_seq=4)),
        Get('{"multi_last":["foo.*"],"up_to_time":"{ts:2}"}'),
        Get('{"multi_last":["foo.*"],"up_to_time":"{ts:3}"}', note="first live is seq 3"),
        Get('{"multi_last":["foo.*"],"up_to_time":"{ts:4}"}'),
        Get('{"multi_last":["foo.*"],"up_to_time":"{ts:5}"}'),
        Get('{"start_time":"{ts:1}"}'),
        Get('{"start_time":"{ts:2}","batch":5}'),
        Get(body(last_by_subj="foo.a")),
        Get(body(next_by_subj="foo.a")),
        Get(body(next_by_subj="foo.*", batch=10)),
    ]


# --- deletes and purges ------------------------------------------------------------------------------------


def purge_steps() -> list[Step]:
    return [
        # An empty stream first.
        Get(body(seq=1)),
        Get(body(seq=0, next_by_subj="foo.a")),
        Get(body(last_by_subj="foo.a")),
        Get(body(last_by_subj=">")),
        Get(body(seq=1, batch=3)),
        Get(body(seq=1, batch=-1)),
        Get(body(next_by_subj=">", batch=2)),
        Get(body(multi_last=["foo.*"])),
        Get(body(multi_last=["foo.*"], up_to_seq=5)),
        Get('{"start_time":"2000-01-01T00:00:00Z"}'),
        Get('{"start_time":"2000-01-01T00:00:00Z","batch":2}'),
        Get('{"multi_last":["foo.*"],"up_to_time":"2200-01-01T00:00:00Z"}'),
        Get(b"", key="foo.a"),
        *[Pub(f"foo.{c}", f"{c}{i}".encode()) for i in range(3) for c in "abc"],
        Get(body(seq=1, batch=100)),
        Purge({"filter": "foo.b"}),
        Get(body(seq=1, batch=100)),
        Get(body(seq=2)),
        Get(body(next_by_subj="foo.b")),
        Get(body(multi_last=["foo.*"])),
        Get(body(multi_last=["foo.*"], up_to_seq=5)),
        Get(body(multi_last=["foo.b"])),
        Purge({"filter": "foo.a", "keep": 1}),
        Get(body(seq=1, batch=100)),
        Get(body(multi_last=["foo.*"], up_to_seq=6)),
        Get('{"start_time":"{ts:1}"}', note="seq 1 purged"),
        Get('{"start_time":"{ts:1}","batch":10}'),
        Get('{"multi_last":["foo.*"],"up_to_time":"{ts:3}"}', note="first remaining is seq 3"),
        Get('{"multi_last":["foo.*"],"up_to_time":"{ts:3+1}"}'),
        Get('{"multi_last":["foo.*"],"up_to_time":"{ts:6}"}'),
        Delete(9),
        Get(body(last_by_subj=">")),
        Get(body(last_by_subj="foo.*")),
        Get(body(seq=8, batch=5)),
        Get(body(seq=9, batch=5)),
        Get('{"start_time":"{ts:9}"}', note="after the last live message"),
        Get('{"start_time":"{ts:8+1}","batch":2}'),
        Get('{"multi_last":["foo.*"],"up_to_time":"{ts:9}"}'),
        Purge(),
        Get(body(seq=1, batch=5)),
        Get(body(seq=10)),
        Get(body(last_by_subj=">")),
        Get(body(multi_last=["foo.*"])),
        Get('{"start_time":"{ts:1}"}'),
        Get('{"multi_last":["foo.*"],"up_to_time":"{ts:5}"}'),
        Pub("foo.a", b"new"),
        Get(body(seq=1, batch=10), note="start in the purged range moves to seq 10"),
        Get(body(seq=1)),
        Get(body(multi_last=["foo.*"], up_to_seq=9)),
        Get(body(multi_last=["foo.*"], up_to_seq=10)),
        Get('{"start_time":"{ts:1}"}'),
        Get('{"start_time":"{ts:10}"}'),
        Get('{"multi_last":["foo.*"],"up_to_time":"{ts:10}"}'),
        Get('{"multi_last":["foo.*"],"up_to_time":"{ts:10+1}"}'),
    ]


def first_seq_steps() -> list[Step]:
    return [
        Pub("foo.a", b"x"),
        Pub("foo.b", b"y"),
        Get(body(seq=1)),
        Get(body(seq=10)),
        Get(body(seq=1, batch=5)),
        Get(body(seq=0, next_by_subj="foo.b")),
        Get(body(multi_last=["foo.*"], up_to_seq=5)),
        Get(body(multi_last=["foo.*"], up_to_seq=10)),
        Get('{"start_time":"2000-01-01T00:00:00Z"}'),
        Get('{"multi_last":["foo.*"],"up_to_time":"{ts:11}"}'),
    ]


# --- allow_direct on and off ------------------------------------------------------------------------------


def toggle_steps(storage: str) -> list[Step]:
    off = {"name": "S", "subjects": ["foo.*"], "storage": storage, "allow_direct": False}
    on = {**off, "allow_direct": True}
    return [
        Pub("foo.a", b"1"),
        Get(body(seq=1), note="created without allow_direct"),
        Get(b"", key="foo.a"),
        Update(on),
        Get(body(seq=1), note="after update to allow_direct true"),
        Get(b"", key="foo.a"),
        Update(off),
        Get(body(seq=1), note="after update back to false"),
        Get(b"", key="foo.a"),
        Get(body(seq=1), conn="headers", silent=True),
        Update(on),
        Pub("foo.b", b"2"),
        Get(body(seq=1, batch=5)),
        Get(b"", key="foo.b"),
        Update({**on, "max_msgs_per_subject": 1, "allow_direct": False}),
        Get(body(seq=1), note="max_msgs_per_subject does not force allow_direct"),
        Update({**on, "max_msgs_per_subject": 1}),
        Get(body(seq=1)),
    ]


# --- sizes: max_bytes defaults, 1024 / 1025 subjects -----------------------------------------------------

MIB = 1024 * 1024


def big_steps() -> list[Step]:
    """max_bytes 0 means the server's max_pending, 64 MiB by default. Each message counts
    exactly 1 MiB ("big" + payload), so the 64th reaches the cap (>=): 64 messages + EOB.
    Seq 1 is one byte smaller, so from seq 1 the 65th is still sent."""
    payload = MIB - len("big")
    steps: list[Step] = [Pub("big", b"a" * (payload - 1))]
    steps += [Pub("big", bytes([97 + i % 26]) * payload) for i in range(1, 67)]
    steps += [
        Get(body(seq=2, batch=100)),
        Get(body(seq=1, batch=100)),
        Get(body(seq=1, batch=100, max_bytes=2 * MIB)),
        Get(body(multi_last=["big"])),
        Get(body(seq=60, batch=100, no_hdr=True)),
    ]
    return steps


def many_subjects_steps() -> list[Step]:
    steps: list[Step] = [Pub(f"m.{i:04d}", b"%d" % i) for i in range(1024)]
    steps += [
        Get(body(multi_last=["m.*"], batch=2), note="exactly 1024 subjects is allowed"),
        Get(body(multi_last=["m.*"], seq=1023, batch=5)),
        Get(body(multi_last=["m.*", "m.0001"], batch=1)),
        Get(body(multi_last=["m.*"], max_bytes=10)),
        Pub("m.1024", b"1024"),
        Get(body(multi_last=["m.*"]), note="t9 #40: 1025 subjects"),
        Get(body(multi_last=["m.*"], batch=1)),
        Get(body(multi_last=["m.*"], seq=1025)),
        Get(body(multi_last=["m.*"], up_to_seq=1024, batch=1), note="1024 within the ceiling"),
        Get(body(multi_last=["m.*"], batch=2, seq=3, up_to_seq=1024), note="paging keeps working within U"),
        Get(body(multi_last=["m.*"], up_to_seq=1025, batch=1)),
        Get(body(multi_last=["m.*"], up_to_seq=2000, batch=1)),
        Get('{"multi_last":["m.*"],"up_to_time":"{ts:1025}","batch":1}'),
        Get('{"multi_last":["m.*"],"up_to_time":"{ts:1025+1}","batch":1}'),
        Get(body(multi_last=["m.*"], batch=2, seq=3, up_to_seq=1024), note="paging: next page, seq = LS+1"),
        Get(body(multi_last=[f"m.{i:04d}" for i in range(1020, 1025)], batch=2)),
        Get(body(multi_last=["m.0000", ">"], batch=1)),
        Get(body(seq=1020, batch=3)),
        Get(b"", key="m.*"),
        Delete(1025),
        Get(body(multi_last=["m.*"], batch=1), note="back to 1024 subjects"),
        Pub("m.0000", b"again"),
        Get(body(multi_last=["m.*"], batch=1, seq=1026)),
        Get(body(multi_last=["m.*"], batch=1, up_to_seq=1025)),
    ]
    return steps


# --- the table ------------------------------------------------------------------------------------------


def _build() -> list[Scenario]:
    out: list[Scenario] = []
    for storage in STORAGES:
        s = stream(storage=storage)
        off = {"name": "OFF", "subjects": ["off.*"], "storage": storage}
        for name, steps, doc in t9_scenarios():
            out.append(Scenario(f"{name}-{storage}", (s, off), (*T9_SETUP, *steps), doc=doc))
        out.append(
            Scenario(
                f"headers-{storage}",
                (stream(subjects=["h.>"], storage=storage),),
                tuple(header_steps()),
                doc="stored headers (duplicates, status lines, Nats-* copies), binary and empty payloads",
            )
        )
        out.append(
            Scenario(
                f"subjects-{storage}",
                (stream(subjects=["kv.>"], storage=storage),),
                tuple(kv_steps()),
                doc="multi-token keys, wildcard keys, > and the deleted-last quirk",
            )
        )
        kv = {
            "name": "KV_b",
            "subjects": ["$KV.b.>"],
            "storage": storage,
            "allow_direct": True,
            "max_msgs_per_subject": 5,
            "allow_rollup_hdrs": True,
            "deny_delete": True,
            "discard": "new",
        }
        out.append(Scenario(f"kvbucket-{storage}", (kv,), tuple(kvbucket_steps()), doc="a KV-shaped stream"))
        transform = {
            "name": "T",
            "subjects": ["in.*"],
            "storage": storage,
            "allow_direct": True,
            "subject_transform": {"src": "in.*", "dest": "out.{{wildcard(1)}}"},
        }
        out.append(
            Scenario(
                f"transform-{storage}", (transform,), tuple(transform_steps()), doc="stored (transformed) subjects"
            )
        )
        out.append(
            Scenario(
                f"partialwild-{storage}",
                (stream(subjects=["m.*", "n.>"], storage=storage),),
                tuple(partial_wildcard_steps()),
                doc="wildcard characters inside tokens",
            )
        )
        out.append(
            Scenario(
                f"history1-{storage}",
                (stream(storage=storage, max_msgs_per_subject=1),),
                tuple(history_steps()),
                doc="max_msgs_per_subject 1: replaced values",
            )
        )
        out.append(Scenario(f"purge-{storage}", (s,), tuple(purge_steps()), doc="empty stream, purges and deletes"))
        out.append(
            Scenario(
                f"firstseq-{storage}",
                (stream(storage=storage, first_seq=10),),
                tuple(first_seq_steps()),
                doc="a stream starting at seq 10",
            )
        )
        off_s = {"name": "S", "subjects": ["foo.*"], "storage": storage, "allow_direct": False}
        out.append(Scenario(f"toggle-{storage}", (off_s,), tuple(toggle_steps(storage)), doc="allow_direct via update"))
        out.append(
            Scenario(
                f"subjects1025-{storage}",
                (stream(subjects=["m.*"], storage=storage),),
                tuple(many_subjects_steps()),
                doc="multi_last: 1024 subjects allowed, 1025 give 413",
            )
        )
    out.append(
        Scenario(
            "default64mib-file",
            (stream(subjects=["big"], storage="file"),),
            tuple(big_steps()),
            doc="max_bytes 0 means the server max_pending, 64 MiB (file only: 67 MiB per run is slow)",
        )
    )
    ids = [s.id for s in out]
    assert len(ids) == len(set(ids)), "duplicate scenario ids"
    return out


SCENARIOS: list[Scenario] = _build()


def by_id(scenario_id: str) -> Scenario:
    for s in SCENARIOS:
        if s.id == scenario_id:
            return s
    raise KeyError(scenario_id)
