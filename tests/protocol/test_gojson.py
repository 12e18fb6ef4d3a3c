"""The accept/reject decoder of CONNECT (:mod:`jsemu.protocol.gojson.unmarshal`): Go ``json.Unmarshal``
semantics; and ``json.Marshal``'s escaping (:mod:`jsemu.protocol.gojson.marshal`)."""

from __future__ import annotations

import pytest

from jsemu.protocol import gojson as gj

SPEC = gj.StructSpec(
    {
        "seq": gj.go_uint,
        "batch": gj.go_int,
        "no_hdr": gj.go_bool,
        "last_by_subj": gj.go_string,
        "multi_last": gj.go_string_list,
    }
)


def test_keys_fold_and_last_duplicate_wins() -> None:
    assert gj.decode_struct(b'{"SEQ":1,"Seq":2,"unknown":{"x":[1]}}', SPEC) == {"seq": 2}
    assert gj.decode_struct('{"no_\u017fdr":true}'.replace("\u017fdr", "hdr"), SPEC) == {"no_hdr": True}
    assert gj.decode_struct('{"la\u017ft_by_\u017fubj":"a"}', SPEC) == {"last_by_subj": "a"}


def test_null_leaves_field_unset() -> None:
    assert gj.decode_struct(b'{"seq":null,"multi_last":null}', SPEC) == {}
    assert gj.decode_struct(b"null", SPEC) == {}
    assert gj.decode_struct(b' \r\n\t{"seq":3} \n', SPEC) == {"seq": 3}


@pytest.mark.parametrize(
    "data",
    [
        b'{"seq":-1}',
        b'{"seq":1.0}',
        b'{"seq":1e3}',
        b'{"seq":"1"}',
        b'{"seq":18446744073709551616}',
        b'{"batch":9223372036854775808}',
        b'{"no_hdr":1}',
        b'{"last_by_subj":1}',
        b'{"multi_last":"a"}',
        b'{"multi_last":[1]}',
        b'{"seq":1} x',
        b'{"seq":NaN}',
        b'{"seq":01}',
        b"[]",
        b'"x"',
        b"",
        b'{"seq":1,}',
        b"\xef\xbb\xbf{}",
    ],
)
def test_rejected(data: bytes) -> None:
    with pytest.raises(gj.GoJSONError):
        gj.decode_struct(data, SPEC)


def test_limits_accepted() -> None:
    assert gj.decode_struct(b'{"seq":18446744073709551615,"batch":-9223372036854775808}', SPEC) == {
        "seq": 18446744073709551615,
        "batch": -9223372036854775808,
    }
    assert gj.decode_struct(b'{"multi_last":["a",null]}', SPEC) == {"multi_last": ["a", ""]}
    assert gj.decode_struct(b'{"last_by_subj":"\xff"}', SPEC) == {"last_by_subj": "\ufffd"}


def test_dumps_escapes_like_go() -> None:
    assert (
        gj.dumps({"subjects": ["foo.>"], "d": "a&b<c", "u": "é"})
        == '{"subjects":["foo.\\u003e"],"d":"a\\u0026b\\u003cc","u":"é"}'
    )
