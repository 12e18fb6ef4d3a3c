"""The strict Go decoder of JetStream API requests (the structs of ``jetstream/requests.py``
that the server itself uses), checked against nats-server.

nats-server decodes API requests with ``json.NewDecoder`` + ``DisallowUnknownFields``
and a ``Decode`` loop, and replies ``"invalid JSON: " + err.Error()``; see
:mod:`jsemu.protocol.gojson.decoder`. The unit tables hold texts verified against the real
server (2.15.1); the differential tests send random request bodies to a real server
and compare (bodies carry a stream name that differs from the subject's, so a body
that decodes is answered "stream name in subject does not match request" and no
stream is ever created).
"""

from __future__ import annotations

import json
import os
import random
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.servers import RealServer

from jsemu.jetstream import requests
from jsemu.protocol import gojson as gj
from jsemu.protocol.frames import Frame, FrameReader

# --- the structs under test: the ones the server uses (jsemu/jetstream/requests.py) ---------
# The tables below hold nats-server's answers, so a field or type that drifts in
# ``requests.py`` shows up here (and the differential tests send bodies to a real server).

STREAM_CONFIG = requests.STREAM_CONFIG_REQUEST
STREAM_NAMES = requests.STREAM_NAMES_REQUEST
MSG_GET = requests.MSG_GET_REQUEST


def error_text(data: bytes, struct: gj.GoStruct = STREAM_CONFIG) -> str | None:
    """The server's description of the request, None if it decodes."""
    try:
        gj.decode_request(data, struct)
    except gj.GoJSONError as exc:
        return "invalid JSON: " + str(exc)
    return None


# --- unit tables (every text verified against nats-server 2.15.1) ----------------------

STREAM_CONFIG_ERRORS: list[tuple[bytes, str]] = [
    (b"x", "invalid character 'x' looking for beginning of value at offset 1"),
    (b'{"name":"S"}x', "invalid character 'x' looking for beginning of value at offset 13"),
    (b",{}", "invalid character ',' looking for beginning of value at offset 1"),
    (b'{"name":"x"}:', "invalid character ':' looking for beginning of value at offset 13"),
    (b"\xef\xbb\xbf{}", "invalid character '\\ufeff' looking for beginning of value at offset 3"),
    (b'{"name":"S","a":}', "invalid character '}' looking for beginning of value at offset 17"),
    (b"[1,}", "invalid character '}' looking for beginning of value at offset 4"),
    (b'{"name":"S","a":1,}', "invalid character '}' looking for beginning of object key string at offset 19"),
    (b"{:1}", "invalid character ':' looking for beginning of object key string at offset 2"),
    (b'{"a" "b"}', "invalid character '\"' after object key at offset 6"),
    (b'{"a":1 "b"}', "invalid character '\"' after object key:value pair at offset 8"),
    (b'{"name":"S","subjects":[1 2]}', "invalid character '2' after array element at offset 27"),
    (b'{"name":"S","x":01}', "invalid character '1' after object key:value pair at offset 18"),
    (b'{"name":"S","x":\xc3\xa9}', "invalid character 'é' looking for beginning of value at offset 18"),
    (b'{"name":"S","x":\xff}', "invalid character '\\xff' looking for beginning of value at offset 17"),
    (b'{"name":"S","x":"\x01"}', "invalid character '\\x01' in string at offset 18"),
    (b'{"name":"S","x":"\\x"}', "invalid escape sequence `\\x` in string at offset 19"),
    (b'{"x":"\\\xc3\xa9"}', 'invalid escape sequence "\\\\\\xc3" in string at offset 8'),
    (b'{"x":"\\ "}', 'invalid escape sequence "\\\\ " in string at offset 8'),
    (b'{"x":"\\u 12 "}', 'invalid escape sequence "\\\\u 12 " in string at offset 12'),
    (b'{"x":"\\u`123"}', 'invalid escape sequence "\\\\u`123" in string at offset 12'),
    (b'{"name":"S","x":"\\u12"}', 'invalid escape sequence `\\u12"}` in string at offset 23'),
    (b'{"name":"S","x":tx}', "invalid character 'x' in literal true (expecting 'r') at offset 18"),
    (b'{"a":nul}', "invalid character '}' in literal null (expecting 'l') at offset 9"),
    (b'{"a":fals}', "invalid character '}' in literal false (expecting 'e') at offset 10"),
    (b'{"name":"S","x":-x}', "invalid character 'x' in numeric literal at offset 18"),
    (b'{"name":"S","x":1.x}', "invalid character 'x' in numeric literal at offset 19"),
    (b'{"name":"S","x":1ex}', "invalid character 'x' in numeric literal at offset 19"),
    (b'{"a":1e+}', "invalid character '}' in numeric literal at offset 9"),
    (b'{"name":"S"} {"b":}', "invalid character '}' looking for beginning of value at offset 19"),
    (b'{"name":"S"', "unexpected EOF"),
    (b'{"name":"S","x":"\\u12', "unexpected EOF"),
    (b'{"a":1.', "unexpected EOF"),
    (b'{"a":tr', "unexpected EOF"),
    (b'{"a":"\xc3', "unexpected EOF"),
    (
        b'{"name":"S","subjects":[1]}',
        "json: cannot unmarshal number into StreamConfigRequest.subjects.0 of type string",
    ),
    (
        b'{"name":"S","subjects":"x"}',
        "json: cannot unmarshal string into Go struct field StreamConfigRequest.subjects of type []string",
    ),
    (
        b'{"name":"S","MAX_MSGS":"x"}',
        "json: cannot unmarshal string into Go struct field StreamConfigRequest.MAX_MSGS of type int64",
    ),
    (
        b'{"name":"S","max_msgs":1.5}',
        "json: cannot unmarshal number 1.5 into Go struct field StreamConfigRequest.max_msgs of type int64",
    ),
    (
        b'{"name":"S","max_msgs":true}',
        "json: cannot unmarshal bool into Go struct field StreamConfigRequest.max_msgs of type int64",
    ),
    (
        b'{"name":"S","max_msgs":9223372036854775808}',
        "json: cannot unmarshal number 9223372036854775808 into Go struct field StreamConfigRequest.max_msgs of type int64",
    ),
    (
        b'{"name":"S","max_msg_size":3000000000}',
        "json: cannot unmarshal number 3000000000 into Go struct field StreamConfigRequest.max_msg_size of type int32",
    ),
    (
        b'{"name":"S","first_seq":-1}',
        "json: cannot unmarshal number -1 into Go struct field StreamConfigRequest.first_seq of type uint64",
    ),
    (
        b'{"name":"S","first_seq":-0}',
        "json: cannot unmarshal number -0 into Go struct field StreamConfigRequest.first_seq of type uint64",
    ),
    (
        b'{"name":"S","first_seq":18446744073709551616}',
        "json: cannot unmarshal number 18446744073709551616 into Go struct field StreamConfigRequest.first_seq of type uint64",
    ),
    (
        b'{"name":"S","max_consumers":1e3}',
        "json: cannot unmarshal number 1e3 into Go struct field StreamConfigRequest.max_consumers of type int",
    ),
    (
        b'{"name":"S","name":{}}',
        "json: cannot unmarshal object into Go struct field StreamConfigRequest.name of type string",
    ),
    (
        b'{"name":"S","no_ack":1}',
        "json: cannot unmarshal number into Go struct field StreamConfigRequest.no_ack of type bool",
    ),
    (
        b'{"name":"S","max_age":"1s"}',
        "json: cannot unmarshal string into Go struct field StreamConfigRequest.max_age of type time.Duration",
    ),
    (
        b'{"name":"S","placement":"x"}',
        "json: cannot unmarshal string into Go struct field StreamConfigRequest.placement of type server.Placement",
    ),
    (
        b'{"name":"S","placement":{"cluster":1}}',
        "json: cannot unmarshal number into Go struct field StreamConfigRequest.placement.cluster of type string",
    ),
    (b'{"name":"S","placement":{"foo":1}}', 'json: unknown field "foo"'),
    (
        b'{"name":"S","sources":"x"}',
        "json: cannot unmarshal string into Go struct field StreamConfigRequest.sources of type []*server.StreamSource",
    ),
    (
        b'{"name":"S","sources":[1]}',
        "json: cannot unmarshal number into StreamConfigRequest.sources.0 of type server.StreamSource",
    ),
    (
        b'{"name":"S","sources":[{"name":1}]}',
        "json: cannot unmarshal number into Go struct field StreamConfigRequest.sources.0.name of type string",
    ),
    (
        b'{"name":"S","sources":[{"name":"a","opt_start_time":5}]}',
        "json: cannot unmarshal number into Go struct field StreamConfigRequest.sources.0.opt_start_time of type time.Time",
    ),
    (
        b'{"name":"S","consumer_limits":"x"}',
        "json: cannot unmarshal string into Go struct field StreamConfigRequest.consumer_limits of type server.StreamConsumerLimits",
    ),
    (
        b'{"name":"S","subject_transform":[]}',
        "json: cannot unmarshal array into Go struct field StreamConfigRequest.subject_transform of type server.SubjectTransformConfig",
    ),
    (
        b'{"name":"S","metadata":[]}',
        "json: cannot unmarshal array into Go struct field StreamConfigRequest.metadata of type map[string]string",
    ),
    (
        b'{"name":"S","metadata":{"a":1}}',
        "json: cannot unmarshal number into Go struct field StreamConfigRequest.metadata.a of type string",
    ),
    (
        b'{"name":"S","metadata":{"a":{}}}',
        "json: cannot unmarshal object into Go struct field StreamConfigRequest.metadata.a of type string",
    ),
    (
        b'{"name":"S","metadata":{"12":1}}',
        "json: cannot unmarshal number into StreamConfigRequest.metadata.12 of type string",
    ),
    (
        b'{"name":"S","metadata":{"a/b":1}}',
        "json: cannot unmarshal number into Go struct field StreamConfigRequest.metadata.a~1b of type string",
    ),
    (b"[]", "json: cannot unmarshal array into Go value of type server.StreamConfigRequest"),
    (b'"x"', "json: cannot unmarshal string into Go value of type server.StreamConfigRequest"),
    (b'{"name":"S","a/b~c":1}', 'json: unknown field "a/b~c"'),
    (b'{"\xff":1}', 'json: unknown field "�"'),
    (b'{"foo":1,"max_msgs":"x"}', 'json: unknown field "foo"'),
    (
        b'{"max_msgs":"x","foo":1}',
        "json: cannot unmarshal string into Go struct field StreamConfigRequest.max_msgs of type int64",
    ),
    (b'{"x":"\\u00e9\\ud800"} {"name":1}', 'json: unknown field "x"'),
    (
        b'{"name":1} {"foo":1}',
        "json: cannot unmarshal number into Go struct field StreamConfigRequest.name of type string",
    ),
    (b'{"name":"S","compression":1}', "json: cannot unmarshal number into Go value of type string"),
    (b'{"name":"S","compression":null}', "unknown compression algorithm"),
    (b'{"name":"S","retention":null}', 'can not unmarshal "null"'),
    (b'{"name":"S","retention":"x\xff"}', 'can not unmarshal "\\"x\\xff\\""'),
    (b'{"discard":"NEW","retention":1}', 'can not unmarshal "1"'),
    (
        b'{"name":"S","sources":[{"name":"a","opt_start_time":"bad"}]}',
        'parsing time "bad" as "2006-01-02T15:04:05Z07:00": cannot parse "bad" as "2006"',
    ),
    (
        b'{"sources":[{"name":"a","opt_start_time":"2024-13-01T00:00:00Z"}]}',
        'parsing time "2024-13-01T00:00:00Z": month out of range',
    ),
    (
        b'{"sources":[{"name":"a","opt_start_time":"2024-02-30T00:00:00Z"}]}',
        'parsing time "2024-02-30T00:00:00Z": day out of range',
    ),
    (
        b'{"sources":[{"name":"a","opt_start_time":"2024-01-01t00:00:00Z"}]}',
        'parsing time "2024-01-01t00:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse "t00:00:00Z" as "T"',
    ),
    (
        b'{"sources":[{"name":"a","opt_start_time":"2024-01-01T00:00:00Zx"}]}',
        'parsing time "2024-01-01T00:00:00Zx": extra text: "x"',
    ),
    (
        b'{"sources":[{"name":"a","opt_start_time":"2024-01-01T25:00:00Z"}]}',
        'parsing time "2024-01-01T25:00:00Z": hour out of range',
    ),
    (
        b'{"sources":[{"name":"a","opt_start_time":"2024-01-01T00:00:00+25:00"}]}',
        'parsing time "2024-01-01T00:00:00+25:00": time zone offset hour out of range',
    ),
    (
        b'{"sources":[{"name":"a","opt_start_time":"2024-01-01T00:00:00+2500"}]}',
        'parsing time "2024-01-01T00:00:00+2500" as "2006-01-02T15:04:05Z07:00": cannot parse "+2500" as "Z07:00"',
    ),
    (
        b'{"sources":[{"name":"a","opt_start_time":"\xc3\xa9"}]}',
        'parsing time "\\xc3\\xa9" as "2006-01-02T15:04:05Z07:00": cannot parse "\\xc3\\xa9" as "2006"',
    ),
]


@pytest.mark.parametrize(("data", "text"), STREAM_CONFIG_ERRORS)
def test_stream_config_error_text(data: bytes, text: str) -> None:
    assert error_text(data) == "invalid JSON: " + text


OTHER_ERRORS: list[tuple[gj.GoStruct, bytes, str]] = [
    (
        STREAM_NAMES,
        b'{"offset":"x"}',
        "json: cannot unmarshal string into Go struct field JSApiStreamNamesRequest.offset of type int",
    ),
    (
        STREAM_NAMES,
        b'{"offset":1.5,"subject":1}',
        "json: cannot unmarshal number 1.5 into Go struct field JSApiStreamNamesRequest.offset of type int",
    ),
    (STREAM_NAMES, b'{"offset":1} {"foo":1}', 'json: unknown field "foo"'),
    (STREAM_NAMES, b"[]", "json: cannot unmarshal array into Go value of type server.JSApiStreamNamesRequest"),
    (
        MSG_GET,
        b'{"seq":-1}',
        "json: cannot unmarshal number -1 into Go struct field JSApiMsgGetRequest.seq of type uint64",
    ),
    (
        MSG_GET,
        b'{"seq":"1"}',
        "json: cannot unmarshal string into Go struct field JSApiMsgGetRequest.seq of type uint64",
    ),
    (MSG_GET, b'{"start_time":"x"}', 'parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"'),
    (
        MSG_GET,
        b'{"multi_last":[1]}',
        "json: cannot unmarshal number into JSApiMsgGetRequest.multi_last.0 of type string",
    ),
    (MSG_GET, b'"x"', "json: cannot unmarshal string into Go value of type server.JSApiMsgGetRequest"),
]


@pytest.mark.parametrize(("struct", "data", "text"), OTHER_ERRORS)
def test_other_request_error_text(struct: gj.GoStruct, data: bytes, text: str) -> None:
    assert error_text(data, struct) == "invalid JSON: " + text


def test_max_depth() -> None:
    # 10000 levels are fine (and then the wrong type), 10001 are not.
    with pytest.raises(gj.GoUnmarshalTypeError):
        gj.decode_request(b"[" * 10000 + b"]" * 10000, STREAM_NAMES)
    assert gj.decode_request(b'{"a":' + b"[" * 9999 + b"]" * 9999 + b"}", STREAM_NAMES, strict=False) == {}
    with pytest.raises(gj.GoSyntaxError) as info:
        gj.decode_request(b"[" * 10001, STREAM_NAMES)
    assert str(info.value) == "exceeded max depth at offset 10001"
    assert (info.value.message, info.value.offset) == ("exceeded max depth", 10001)
    deep = b'{"a":' * 10000 + b"1" + b"}" * 10000
    assert error_text(deep) == 'invalid JSON: json: unknown field "a"'
    assert error_text(b'{"a":' * 10001 + b"1" + b"}" * 10001) == "invalid JSON: exceeded max depth at offset 50001"


# Values decoded by the real server (read back from the created streams' configs).
STREAM_CONFIG_VALUES: list[tuple[bytes, dict[str, Any]]] = [
    # A stream of objects overlays; slices are replaced.
    (
        b'{"name":"V","subjects":["a"],"max_msgs":5} {"max_msgs":7,"subjects":["b","c"]}',
        {"name": "V", "subjects": ["b", "c"], "max_msgs": 7},
    ),
    # ... but v1 reuses the old slice's elements: a later object merges into them.
    (
        b'{"sources":[{"name":"A","opt_start_seq":5,"filter_subject":"x"}]} {"sources":[{"name":"B"}]}',
        {"sources": [{"name": "B", "opt_start_seq": 5, "filter_subject": "x"}]},
    ),
    (
        b'{"sources":[{"name":"A","opt_start_seq":5},{"name":"C","opt_start_seq":9}]} {"sources":[{"name":"B"}]}'
        + b' {"sources":[{"name":"D"},{"name":"E"}]}',
        {"sources": [{"name": "D", "opt_start_seq": 5}, {"name": "E", "opt_start_seq": 9}]},
    ),
    (
        b'{"sources":[{"subject_transforms":[{"src":"a.>","dest":"b.>"}]}]} {"sources":[{"subject_transforms":[{"src":"c"}]}]}',
        {"sources": [{"subject_transforms": [{"src": "c", "dest": "b.>"}]}]},
    ),
    # [] and null drop the old elements.
    (
        b'{"sources":[{"name":"A","opt_start_seq":5}]} {"sources":[]} {"sources":[{"name":"B"}]}',
        {"sources": [{"name": "B"}]},
    ),
    (
        b'{"sources":[{"name":"A","opt_start_seq":5}]} {"sources":null} {"sources":[{"name":"B"}]}',
        {"sources": [{"name": "B"}]},
    ),
    (b'{"sources":[{"name":"A"}]} {"sources":null}', {"sources": None}),
    (b'{"sources":[null]}', {"sources": [None]}),
    # null in a []string keeps the (old or zero) element.
    (b'{"subjects":["x","y"]} {"subjects":[null,"z"]}', {"subjects": ["x", "z"]}),
    (b'{"subjects":[null]}', {"subjects": [""]}),
    # Maps merge keys; a null value is the zero value.
    (b'{"metadata":{"a":"1","b":"2"}} {"metadata":{"b":"3","c":null}}', {"metadata": {"a": "1", "b": "3", "c": ""}}),
    (
        b'{"placement":{"tags":["t1"],"preferred":"p"}} {"placement":{"tags":["t2"]}}',
        {"placement": {"tags": ["t2"], "preferred": "p"}},
    ),
    (b'{"placement":{"cluster":"c"}} {"placement":null}', {"placement": None}),
    # null leaves non-pointer values alone.
    (
        b'{"consumer_limits":{"max_ack_pending":5}} {"consumer_limits":null} {"consumer_limits":{"inactive_threshold":1}}',
        {"consumer_limits": {"max_ack_pending": 5, "inactive_threshold": 1}},
    ),
    (b'{"max_msgs":5,"max_msgs":null,"no_ack":null,"name":null}', {"max_msgs": 5}),
    # Keys: exact, else case-insensitive (with Go's folding); the last duplicate wins.
    (b'{"MAX_BYTES":100,"max_bytes":200,"Max_Bytes":300}', {"max_bytes": 300}),
    (b'{"\xc5\xbfealed":true,"\xc5\xbfEALED":false}', {"sealed": False}),
    # Strings: escapes, unpaired surrogates and invalid UTF-8 become U+FFFD.
    (b'{"description":"\\ud800x\\u00e9\xff\\ud83d\\ude00\\/"}', {"description": "\ufffdx\u00e9\ufffd\U0001f600/"}),
    (b'{"description":"\xe2\x82"}', {"description": "\ufffd\ufffd"}),
    # Numbers: -0 is 0 for signed types; limits.
    (
        b'{"max_msgs":-0,"max_bytes":-9223372036854775808,"first_seq":18446744073709551615}',
        {"max_msgs": 0, "max_bytes": -9223372036854775808, "first_seq": 18446744073709551615},
    ),
    (b'{"max_age":1000000000,"max_msg_size":-2147483648}', {"max_age": 1000000000, "max_msg_size": -2147483648}),
    # Enums get the raw JSON text.
    (
        b'{"retention":"workqueue","discard":"NEW","storage":"memory","compression":"s2","persist_mode":""}',
        {
            "retention": "workqueue",
            "discard": "new",
            "storage": "memory",
            "compression": "s2",
            "persist_mode": "default",
        },
    ),
    # Times (Unix nanoseconds), including what Go's lenient RFC 3339 parser lets through.
    (
        b'{"mirror":{"opt_start_time":"2024-01-01T01:02:03.123456789+01:30"}}',
        {"mirror": {"opt_start_time": 1704065523123456789}},
    ),
    (b'{"mirror":{"opt_start_time":"2024-01-01T1:02:03,5Z"}}', {"mirror": {"opt_start_time": 1704070923500000000}}),
    (b'{"mirror":{"opt_start_time":"2024-01-01T00:00:00+24:00"}}', {"mirror": {"opt_start_time": 1703980800000000000}}),
    (b'{"mirror":{"opt_start_time":"0001-01-01T00:00:00Z"}}', {"mirror": {"opt_start_time": gj.GO_ZERO_TIME_NS}}),
    (b'{"mirror":{"opt_start_time":null}}', {"mirror": {"opt_start_time": None}}),
    # Whitespace only, or nothing: no value at all.
    (b"", {}),
    (b" \r\n\t", {}),
    (b"null", {}),
    (b'{"name":"a"} null {}', {"name": "a"}),
]


@pytest.mark.parametrize(("data", "value"), STREAM_CONFIG_VALUES)
def test_stream_config_values(data: bytes, value: dict[str, Any]) -> None:
    assert gj.decode_request(data, STREAM_CONFIG) == value


def test_not_strict_ignores_unknown_fields() -> None:
    assert gj.decode_request(b'{"foo":1,"name":"a"}', STREAM_CONFIG, strict=False) == {"name": "a"}
    assert error_text(b'{"foo":1,"name":"a"}') == 'invalid JSON: json: unknown field "foo"'


def test_error_classes() -> None:
    with pytest.raises(gj.GoSyntaxError) as syntax:
        gj.decode_request(b'{"name":"S"}x', STREAM_CONFIG)
    assert (syntax.value.message, syntax.value.offset) == ("invalid character 'x' looking for beginning of value", 13)
    with pytest.raises(gj.GoUnmarshalTypeError) as typed:
        gj.decode_request(b'{"sources":[{"name":1}]}', STREAM_CONFIG)
    assert (typed.value.value, typed.value.type_name, typed.value.struct, typed.value.field) == (
        "number",
        "string",
        "StreamConfigRequest",
        "sources.0.name",
    )
    assert isinstance(typed.value, gj.GoJSONError) and isinstance(syntax.value, ValueError)


def test_scan_values() -> None:
    assert list(gj.scan_values(b' {"a":1}\n[2] "x"3 ')) == [(1, 8), (9, 12), (13, 16), (16, 17)]
    with pytest.raises(gj.GoJSONError, match="unexpected EOF"):
        list(gj.scan_values(b"{} {"))


def test_type_names() -> None:
    assert gj.GoSlice(gj.GoPointer(gj.GoStruct("StreamSource", {}))).type_name == "[]*server.StreamSource"
    assert gj.GoMap(gj.GoSlice(gj.T_TIME)).type_name == "map[string][]time.Time"
    assert gj.GoStruct("x.Y", {}).type_name == "x.Y"
    assert gj.GoStruct("Y", {}, package="").type_name == "Y"
    assert gj.GoEnum("server.RetentionPolicy", str).type_name == "server.RetentionPolicy"
    assert gj.T_ANY.type_name == "interface {}"


def test_any_and_floats() -> None:
    s = gj.GoStruct("T", {"a": gj.T_ANY, "f": gj.T_FLOAT64, "g": gj.T_FLOAT32, "u8": gj.T_UINT8, "i8": gj.T_INT8})
    assert gj.decode_request(b'{"a":{"x":[1,"y",null,true]},"f":1e-400,"g":1.5,"u8":255,"i8":-128}', s) == {
        "a": {"x": [1.0, "y", None, True]},
        "f": 0.0,
        "g": 1.5,
        "u8": 255,
        "i8": -128,
    }
    assert error_text(b'{"a":[{"b":1e400}]}', s) == (
        "invalid JSON: json: cannot unmarshal number 1e400 into Go struct field T.a.0.b of type float64"
    )
    assert (
        error_text(b'{"g":1e39}', s)
        == "invalid JSON: json: cannot unmarshal number 1e39 into Go struct field T.g of type float32"
    )
    assert (
        error_text(b'{"u8":256}', s)
        == "invalid JSON: json: cannot unmarshal number 256 into Go struct field T.u8 of type uint8"
    )
    assert (
        error_text(b'{"i8":"1"}', s)
        == "invalid JSON: json: cannot unmarshal string into Go struct field T.i8 of type int8"
    )
    assert gj.decode_request(b'{"a":1} {"a":null}', s) == {"a": None}


def test_go_quote() -> None:
    assert gj.go_quote(b'a"\\\n\x00\x7f\xff\xc3\xa9\xe2\x80\xa8\xf0\x9f\x99\x82\t') == (
        '"a\\"\\\\\\n\\x00\\x7f\\xffé\\u2028🙂\\t"'
    )
    assert gj.go_quote("x\udcff") == '"x\\xff"'  # a surrogate escape is the invalid byte
    assert gj.go_quote_rune(0xFEFF) == "'\\ufeff'"
    assert gj.go_quote_rune(ord("'")) == "'\\''"
    assert gj.go_quote_rune(ord('"')) == "'\"'"
    assert gj.go_quote_rune(0x10FFFF) == "'\\U0010ffff'"


def test_go_unmarshal_string() -> None:
    assert gj.go_unmarshal_string(b'"a\\u00e9"') == "aé"
    assert gj.go_unmarshal_string("null") is None
    for raw, kind in [(b"1", "number"), (b"true", "bool"), (b"[]", "array"), (b'{"a":1}', "object")]:
        with pytest.raises(gj.GoJSONError) as info:
            gj.go_unmarshal_string(raw)
        assert str(info.value) == f"json: cannot unmarshal {kind} into Go value of type string"


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("1970-01-01T00:00:00Z", 0),
        ("1970-01-01T00:00:00.000000001Z", 1),
        ("1970-01-01T00:00:00.1234567891Z", 123456789),
        ("1969-12-31T23:59:59-00:01", 59_000_000_000),
        ("2000-02-29T12:00:00+00:00", 951825600_000_000_000),
        ("9999-12-31T23:59:59Z", 253402300799_000_000_000),
        ("0000-01-01T00:00:00Z", -62167219200_000_000_000),
        ("2024-01-01T00:00:00.5+23:59", 1704067200_000_000_000 - 86340_000_000_000 + 500_000_000),
    ],
)
def test_parse_go_time(text: str, want: int) -> None:
    assert gj.parse_go_time(text) == want


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("", 'parsing time "" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "2006"'),
        ("2024", 'parsing time "2024" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "-"'),
        (
            "2024-1-01T00:00:00Z",
            'parsing time "2024-1-01T00:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse "1-01T00:00:00Z" as "01"',
        ),
        ("2023-02-29T00:00:00Z", 'parsing time "2023-02-29T00:00:00Z": day out of range'),
        ("2024-01-01T00:60:00Z", 'parsing time "2024-01-01T00:60:00Z": minute out of range'),
        ("2024-01-01T00:00:60Z", 'parsing time "2024-01-01T00:00:60Z": second out of range'),
        (
            "2024-01-01T00:00:00",
            'parsing time "2024-01-01T00:00:00" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "Z07:00"',
        ),
        ("2024-01-01T00:00:00+01:61", 'parsing time "2024-01-01T00:00:00+01:61": time zone offset minute out of range'),
        (
            "2024-01-01T00:00:00 01:00",
            'parsing time "2024-01-01T00:00:00 01:00" as "2006-01-02T15:04:05Z07:00": cannot parse " 01:00" as "Z07:00"',
        ),
        (
            'é"\\\x01\ufffd',
            'parsing time "\\xc3\\xa9\\"\\\\\\x01\\xef\\xbf\\xbd" as "2006-01-02T15:04:05Z07:00": cannot parse "\\xc3\\xa9\\"\\\\\\x01\\xef\\xbf\\xbd" as "2006"',
        ),
    ],
)
def test_parse_go_time_errors(text: str, error: str) -> None:
    with pytest.raises(gj.GoJSONError) as info:
        gj.parse_go_time(text)
    assert str(info.value) == error


# --- differential tests against the real server ------------------------------------------

SUBJECT = b"$JS.API.STREAM.CREATE.SUBJ"  # bodies never name the stream SUBJ


class Requester:
    """A minimal synchronous NATS client: request/reply over one connection, pipelined."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=20)
        self.reader = FrameReader()
        assert self._next().op == b"INFO"
        self.sock.sendall(b'CONNECT {"verbose":false,"pedantic":false}\r\nSUB _INBOX.gj.* 1\r\nPING\r\n')
        while self._next().op != b"PONG":
            pass

    def _next(self) -> Frame:
        return self.reader.next_from(self.sock.recv)

    def requests(self, bodies: list[bytes], batch: int = 200) -> list[tuple[int, str]]:
        """(err_code, description) for each body; (0, "") when the reply has no error."""
        out: list[tuple[int, str]] = []
        for first in range(0, len(bodies), batch):
            chunk = bodies[first : first + batch]
            self.sock.sendall(
                b"".join(
                    b"PUB %s _INBOX.gj.%d %d\r\n%s\r\n" % (SUBJECT, i, len(body), body) for i, body in enumerate(chunk)
                )
            )
            replies: dict[int, tuple[int, str]] = {}
            while len(replies) < len(chunk):
                frame = self._next()
                if frame.op == b"PING":
                    self.sock.sendall(b"PONG\r\n")
                    continue
                if frame.op != b"MSG":
                    assert frame.op in (b"PONG", b"+OK"), frame.raw
                    continue
                subject = frame.subject
                reply = json.loads(frame.payload)
                error = reply.get("error") or {}
                replies[int(subject.rsplit(b".", 1)[1])] = (error.get("err_code", 0), error.get("description", ""))
            out.extend(replies[i] for i in range(len(chunk)))
        return out

    def close(self) -> None:
        self.sock.close()


@pytest.fixture(scope="module")
def real() -> Iterator[Requester]:
    server = RealServer()
    requester = Requester(server.port)
    try:
        yield requester
    finally:
        requester.close()
        server.stop()


def check_same(real: Requester, bodies: list[bytes]) -> None:
    mismatches = []
    for body, (code, description) in zip(bodies, real.requests(bodies), strict=True):
        ours = error_text(body)
        if code == 10025:
            ok = ours == description
        else:
            ok = ours is None  # the server got past decoding
        if not ok:
            mismatches.append((body, code, description, ours))
    assert not mismatches, "\n".join(f"{b!r}\n  real: {c} {d}\n  ours: {o}" for b, c, d, o in mismatches[:10])


def test_tables_match_real_server(real: Requester) -> None:
    check_same(real, [data for data, _ in STREAM_CONFIG_ERRORS])
    replies = real.requests([data for data, _ in STREAM_CONFIG_ERRORS])
    assert [d for _, d in replies] == ["invalid JSON: " + text for _, text in STREAM_CONFIG_ERRORS]
    check_same(real, [data for data, _ in STREAM_CONFIG_VALUES])


# Pieces of JSON (and of broken JSON) to splice into bodies.
JUNK = [
    b"{", b"}", b"[", b"]", b":", b",", b'"', b"\\", b"\\u", b"\\u00", b"\\ud800", b"\\uD83D\\uDE00", b"\\x", b"\\/",
    b"n", b"t", b"f", b"nul", b"null", b"true", b"-", b"0", b"1", b"01", b".", b"e", b"E", b"+", b"1e400",
    b" ", b"\n", b"\t", b"\r", b"\x00", b"\x01", b"\x1f", b"\x7f", b"\xff", b"\xc3", b"\xc3\xa9", b"\xe2\x82",
    b"\xf0\x9f\x99\x82", b"\xef\xbb\xbf", b"\xed\xa0\x80", b"x", b"`", b"'", b"/", b"~", b'"foo":1,', b"[]", b"{}",
]  # fmt: skip
STRINGS = [
    "S1", "", "a", "foo.>", "é", "\u2028", 'a"b', "\\", "🙂", "s2", "none", "file", "memory", "old", "NEW", "limits",
    "workqueue", "async", "1s", "12", "a/b", "~", "2024-01-01T00:00:00Z", "2024-02-29T23:59:59.123456789+05:30",
    "2024-13-01T00:00:00Z", "2024-01-01t00:00:00Z", "bad", "x" * 70,
]  # fmt: skip
NUMBERS = [
    0,
    1,
    -1,
    5,
    2**31,
    2**31 - 1,
    -(2**31),
    2**63 - 1,
    2**63,
    -(2**63),
    -(2**63) - 1,
    2**64 - 1,
    2**64,
    1.5,
    1e3,
]
KEYS = [key for key in STREAM_CONFIG.fields]
ODD_KEYS = ["foo", "MAX_MSGS", "Name", "\u017fealed", "SUBJECTS", "max-msgs", "a/b~c", "", "12"]


ENUM_VALUES = {
    "retention": ["limits", "interest", "workqueue"],
    "discard": ["old", "new"],
    "storage": ["file", "memory"],
    "compression": ["s2", "none"],
    "persist_mode": ["default", "async", ""],
}
SCALAR_VALUES: dict[gj.GoType, list[Any]] = {
    gj.T_STRING: ["desc"],
    gj.T_BOOL: [True, False],
    gj.T_INT: [-1, 0, 10],
    gj.T_INT64: [-1, 1000],
    gj.T_INT32: [-1, 1024],
    gj.T_UINT64: [0, 5],
    gj.T_DURATION: [0, 10**9],
}
COMPOSITE_VALUES: dict[str, Any] = {
    "subjects": ["a", "b.>"],
    "placement": {"cluster": "c", "tags": ["t"]},
    "metadata": {"k": "v"},
    "subject_transform": {"src": "a", "dest": "b"},
    "republish": {"src": ">", "dest": "r.>"},
    "consumer_limits": {"max_ack_pending": 5},
}
SOURCE_FIELDS: list[tuple[str, Any]] = [
    ("opt_start_seq", 5),
    ("opt_start_time", "2024-01-01T00:00:00Z"),
    ("filter_subject", "f.>"),
    ("subject_transforms", [{"src": "a.*", "dest": "b.{{wildcard(1)}}"}]),
    ("external", {"api": "$JS.x.API", "deliver": "d"}),
    ("consumer", {"name": "c"}),
]


def good_value(key: str, rnd: random.Random) -> Any:
    """A plausible value for a StreamConfigRequest field."""
    typ = STREAM_CONFIG.fields[key]
    if key == "name":
        return "S1"
    if key in ENUM_VALUES:
        return rnd.choice(ENUM_VALUES[key])
    if key in ("mirror", "sources"):
        src: dict[str, Any] = {"name": rnd.choice(["A", "B"])}
        src.update((k, v) for k, v in SOURCE_FIELDS if rnd.random() < 0.3)
        return src if key == "mirror" else [src][: rnd.randint(0, 1)]
    if typ in SCALAR_VALUES:
        return rnd.choice(SCALAR_VALUES[typ])
    return COMPOSITE_VALUES[key]


def junk_value(rnd: random.Random, depth: int = 0) -> Any:
    r = rnd.random()
    if depth < 2 and r < 0.15:
        return [junk_value(rnd, depth + 1) for _ in range(rnd.randint(0, 3))]
    if depth < 2 and r < 0.3:
        return {
            rnd.choice(["name", "src", "a", "12", "foo"]): junk_value(rnd, depth + 1) for _ in range(rnd.randint(0, 3))
        }
    return rnd.choice([None, True, False, rnd.choice(STRINGS), rnd.choice(NUMBERS)])


def random_body(rnd: random.Random) -> bytes:
    """A config (maybe with wrong-typed values and unknown keys), maybe several, maybe mangled."""
    values = []
    for _ in range(1 if rnd.random() < 0.8 else rnd.randint(2, 3)):
        config = {key: good_value(key, rnd) for key in rnd.sample(KEYS, rnd.randint(0, 12))}
        for _ in range(rnd.choice([0, 0, 1, 2, 3])):
            config[rnd.choice(KEYS + ODD_KEYS)] = junk_value(rnd)
        sources = config.get("sources")
        if isinstance(sources, list) and sources and isinstance(sources[0], dict) and rnd.random() < 0.3:
            sources[0][rnd.choice(["name", "opt_start_seq", "opt_start_time", "external", "junk"])] = junk_value(rnd)
        text = json.dumps(config, ensure_ascii=rnd.random() < 0.5, separators=rnd.choice([(",", ":"), (", ", ": ")]))
        values.append(text.encode())
    body = rnd.choice([b" ", b"\n", b""]).join(values)
    if rnd.random() < 0.15:
        body = b" " * rnd.randint(0, 140) + body  # move things across the decoder's 64/128-byte reads
    if rnd.random() < 0.6:
        body = mangle(body, rnd)
    return body


def mangle(body: bytes, rnd: random.Random) -> bytes:
    out = bytearray(body)
    for _ in range(rnd.randint(1, 3)):
        i = rnd.randint(0, len(out))
        op = rnd.random()
        if op < 0.35:
            del out[i : i + rnd.randint(1, 3)]
        elif op < 0.75:
            out[i:i] = rnd.choice(JUNK)
        elif op < 0.85:
            del out[i:]
        else:
            out[i:i] = bytes([rnd.randrange(256)])
    return bytes(out)


def boundary_bodies() -> list[bytes]:
    """Errors whose text depends on what the decoder has buffered: invalid runes and
    ``\\u`` escapes cut by the end of the decoder's 64, 128, 256, ... byte reads."""
    bodies = []
    for total in (64, 128, 256, 512, 1024):
        for k in range(total - 6, total + 2):
            pad = k - len(b'{"description":"')
            bodies += [b'{"description":"' + b"a" * pad + tail for tail in (b'\\uZZ12"}', b'\\u1"', b"\xc3\xa9\x01")]
            pad = k - len(b'{"x":')
            bodies += [b'{"x":' + b" " * pad + tail for tail in (b"\xc3\xa9}", b"\xf0\x9f\x99\x82", b"tru\xc3\xa9")]
            bodies.append(b'{"name":"S1"}' + b" " * pad + b"\xe2\x82\xac")
    return bodies


def test_seeded_corpus_matches_real_server(real: Requester) -> None:
    rnd = random.Random(20260101)
    count = int(os.environ.get("JSEMU_GOJSON_CORPUS", "1500"))
    check_same(real, boundary_bodies() + [random_body(rnd) for _ in range(count)])


json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from(NUMBERS),
    st.integers(-(2**65), 2**65),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(STRINGS),
    st.text(max_size=8),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["name", "src", "a", "12"]), inner, max_size=3)
    ),
    max_leaves=6,
)
configs = st.dictionaries(st.sampled_from(KEYS + ODD_KEYS), json_values, max_size=6)
edits = st.lists(
    st.tuples(
        st.floats(0, 1),
        st.sampled_from(["delete", "insert", "truncate", "byte"]),
        st.sampled_from(JUNK),
        st.integers(0, 255),
    ),
    max_size=3,
)


@settings(
    max_examples=int(os.environ.get("JSEMU_GOJSON_EXAMPLES", "300")),
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    values=st.lists(configs, min_size=1, max_size=3),
    ascii_only=st.booleans(),
    pad=st.integers(0, 130),
    edits=edits,
)
def test_random_bodies_match_real_server(
    real: Requester,
    values: list[dict[str, Any]],
    ascii_only: bool,
    pad: int,
    edits: list[tuple[float, str, bytes, int]],
) -> None:
    body = bytearray(
        b" " * (pad if pad > 100 else 0) + b" ".join(json.dumps(v, ensure_ascii=ascii_only).encode() for v in values)
    )
    for where, op, junk, byte in edits:
        i = int(where * len(body))
        if op == "delete":
            del body[i : i + 2]
        elif op == "insert":
            body[i:i] = junk
        elif op == "truncate":
            del body[i:]
        else:
            body[i:i] = bytes([byte])
    check_same(real, [bytes(body)])
