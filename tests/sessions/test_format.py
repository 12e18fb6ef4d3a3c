"""The session file (format version 1): written records read back, and every hostile file
refused with one line, by the reader and by ``jsemu replay`` (exit status 2, nothing sent)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jsemu.cli import main
from jsemu.sessions.format import MAX_CONNECTIONS, MAX_LINE, SessionFileError, encode_record, parse_session

HEADER = json.dumps({"format": "jsemu-session", "version": 1, "upstream": "nats://127.0.0.1:4222", "redacted": True})
OPEN = '{"conn":1,"t":0.0,"ev":"open","peer":"127.0.0.1:1"}'


def _file(*lines: str) -> bytes:
    return "".join(line + "\n" for line in lines).encode()


def test_records_read_back() -> None:
    binary = encode_record(1, 0.5, "s2c", b"\xff\x00MSG")
    assert binary["enc"] == "base64"
    text = encode_record(1, 0.25, "c2s", "PUB é 2\r\nhi\r\n".encode())
    assert "enc" not in text
    close = '{"conn":1,"t":0.75,"ev":"close","by":"client"}'
    session = parse_session(io.BytesIO(_file(HEADER, OPEN, json.dumps(text), json.dumps(binary), close)))
    conn = session.connections[1]
    assert [(c.dir, c.t, c.data, c.line) for c in conn.chunks] == [
        ("c2s", 0.25, "PUB é 2\r\nhi\r\n".encode(), 3),
        ("s2c", 0.5, b"\xff\x00MSG", 4),
    ]
    assert (conn.closed, conn.closed_by, conn.open_line, conn.close_line) == (0.75, "client", 2, 5)


HOSTILE = {
    "empty": (b"", "empty file (no header line)"),
    "not JSON": (b"hello\n", "line 1: not JSON"),
    "not an object": (b"[1]\n", "line 1: not a JSON object"),
    "no format": (_file('{"version":1}'), 'line 1: not a jsemu session file (no "format": "jsemu-session" header)'),
    "wrong version": (
        _file('{"format":"jsemu-session","version":2}'),
        "line 1: session format version 2 is not supported (this jsemu reads 1)",
    ),
    "truncated": (_file(HEADER, OPEN)[:-7], "line 2: truncated (no newline at the end of the file)"),
    "record not JSON": (_file(HEADER, OPEN, '{"conn":1,'), "line 3: not JSON"),
    "never opened": (
        _file(HEADER, '{"conn":2,"t":0,"dir":"c2s","data":"PING\\r\\n"}'),
        "line 2: connection 2 was never opened",
    ),
    "time goes back": (
        _file(HEADER, OPEN.replace("0.0", "1.0"), '{"conn":1,"t":0.5,"dir":"c2s","data":""}'),
        'line 3: "t" must be seconds that never decrease',
    ),
    "bad conn": (_file(HEADER, '{"conn":"1","t":0,"ev":"open"}'), 'line 2: "conn" must be a positive integer'),
    "bad base64": (
        _file(HEADER, OPEN, '{"conn":1,"t":0,"dir":"s2c","data":"!!","enc":"base64"}'),
        'line 3: "data" is not valid base64',
    ),
    "unknown record": (
        _file(HEADER, OPEN, '{"conn":1,"t":0,"dir":"up","data":""}'),
        'line 3: neither "ev": "open"|"close" nor "dir": "c2s"|"s2c"',
    ),
    "after close": (
        _file(HEADER, OPEN, '{"conn":1,"t":0,"ev":"close","by":"client"}', '{"conn":1,"t":0,"dir":"c2s","data":""}'),
        "line 4: connection 1 is already closed",
    ),
    "huge frame": (
        _file(HEADER, OPEN, '{"conn":1,"t":0,"dir":"s2c","data":"' + "x" * MAX_LINE + '"}'),
        f"line 3: longer than {MAX_LINE} bytes",
    ),
    "too many connections": (
        _file(HEADER, *(f'{{"conn":{n},"t":0,"ev":"open"}}' for n in range(1, MAX_CONNECTIONS + 2))),
        f"line {MAX_CONNECTIONS + 2}: more than {MAX_CONNECTIONS} connections",
    ),
    "huge MSG size": (
        _file(HEADER, OPEN, '{"conn":1,"t":0,"dir":"s2c","data":"MSG a 1 99999999999\\r\\nxx"}'),
        "connection 1: the server's bytes end inside a frame (truncated?)",
    ),
    "not NATS": (
        _file(HEADER, OPEN, '{"conn":1,"t":0,"dir":"s2c","data":"MSG a 1 x\\r\\n"}'),
        "line 3: connection 1: the server's bytes are not NATS protocol",
    ),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_file_refused_with_one_line(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data, message = HOSTILE[case]
    path = tmp_path / "hostile.jsonl"
    path.write_bytes(data)
    # --against a port nobody listens on: a refused file must never get as far as connecting
    assert main(["replay", str(path), "--against", "nats://127.0.0.1:1"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"jsemu replay: {path}: {message}\n"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=60), st.text(max_size=60).map(str.encode)), max_size=6))
def test_any_bytes_give_a_session_or_one_line(lines: list[bytes]) -> None:
    """Whatever follows a valid header, the reader returns a session or a SessionFileError,
    never another exception."""
    data = _file(HEADER) + b"\n".join(lines)
    try:
        session = parse_session(io.BytesIO(data))
    except SessionFileError as exc:
        assert "\n" not in str(exc)
    else:
        assert all(c.conn >= 1 for c in session.connections.values())


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {"conn": st.sampled_from([1, 2, 0, "x"]), "t": st.sampled_from([0, 0.5, -1, "x", True])},
            optional={
                "ev": st.sampled_from(["open", "close", "x"]),
                "dir": st.sampled_from(["c2s", "s2c", "x"]),
                "data": st.one_of(st.text(max_size=10), st.integers()),
                "enc": st.sampled_from(["base64", "x"]),
                "by": st.sampled_from(["client", "server", None]),
            },
        ),
        max_size=8,
    )
)
def test_any_records_give_a_session_or_one_line(records: list[dict[str, object]]) -> None:
    data = _file(HEADER, *(json.dumps(r) for r in records))
    try:
        parse_session(io.BytesIO(data))
    except SessionFileError as exc:
        assert "\n" not in str(exc)
