"""Configuration files from a small grammar, well formed and corrupted, read by nats-server 2.15.1
(``nats-server -t -c FILE``: parse and check, then exit) and by jsemu (the stand-in's options
resolved in this process): the same first stderr line and exit status, or both accept.

The grammar covers what the lexer (``conf/lex.go``, ported in jsemu/config/lexer.py) tells apart:
``=``, ``:`` and blank separators, quoted and bare keys and strings, numbers with size suffixes,
durations, booleans, nested maps and arrays, ``$variables``, ``#`` and ``//`` comments, top-level
braces. Corruptions: the file cut at any character, a character inserted or deleted anywhere,
a quote, brace or bracket added. Keys are ones jsemu implements plus ``jsemu_test_var`` (only
there for a variable to read, which nats-server lets be), so a semantic refusal does not hide
a syntax difference.

``-t`` reports an empty configuration (``FILE: config has no values or is empty``) as an error
where a normal start only warns and goes on: jsemu's side of that is "the file read as no keys".
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support.servers import nats_server_binary
from support.startup import strip_prefix

from jsemu.config.parser import ConfigError, parse_file

_EMPTY = ": config has no values or is empty"


def _real(conf: Path) -> tuple[int, list[str]]:
    """Exit status and error lines. nats-server reports every error of the file's keys, one a
    line (the first after ``nats-server: ``), in its map's random order."""
    done = subprocess.run(
        [nats_server_binary(), "-t", "-c", str(conf)], capture_output=True, text=True, timeout=10, check=False
    )
    lines = [line for line in done.stderr.splitlines() if line]
    first = strip_prefix(lines[0]) if lines else ""
    if done.returncode == 0 or first.endswith(_EMPTY):  # valid, or only -t's refusal of an empty file
        return 0, ["empty" if first.endswith(_EMPTY) else ""]
    return done.returncode, [first, *("nats-server: " + line for line in lines[1:])]


def _emu(conf: Path) -> tuple[int, str]:
    from jsemu.cli import stand_in_options

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            stand_in_options(["-c", str(conf), "-a", "127.0.0.1", "-p", "-1"])
        except SystemExit as exc:
            return (exc.code if isinstance(exc.code, int) else 1), strip_prefix(
                (err.getvalue().splitlines() or [""])[0]
            )
    try:
        empty = parse_file(conf)[0] == {}
    except ConfigError:
        empty = False
    return 0, "empty" if empty else ""


def _check(conf: Path) -> None:
    (code, line), (real_code, real_lines) = _emu(conf), _real(conf)
    assert code == real_code and line in real_lines, (conf.read_text(), line, real_lines)


def _compare(text: str) -> None:
    with tempfile.TemporaryDirectory(prefix="jsemu-lexer-") as tmp:
        conf = Path(tmp) / "c.conf"
        conf.write_bytes(text.encode())
        _check(conf)


# --- the grammar ---------------------------------------------------------------------------------

_BARE = st.sampled_from(["abc", "a-b.c", "nats://h:4222", "x_1", "$2a$10$abc", "127.0.0.1", "a\\tb"])
_QUOTED = st.sampled_from(['"abc"', '"a b"', '"a\\x41"', '"a\\"b"', "'x y'", '""', '"1G"', '"2s"', '"$x"'])
_NUMBER = st.sampled_from(["0", "1", "-5", "1024", "1.5", "-2.25", "1K", "2MB", "3gib", "1k3", "9EB", "12e"])
_OTHER = st.sampled_from(["true", "no", "On", "1s", "1m30s", "2020-01-02T03:04:05Z", "(\nraw\n)", "$jsemu_test_var"])
_SCALAR = st.one_of(_BARE, _QUOTED, _NUMBER, _OTHER)
_SEP = st.sampled_from([": ", " = ", " ", ":", "=", " :  ", "\t"])
_END = st.sampled_from(["\n", "\n\n", "; ", ", ", " # c\n", " // c\n", "\r\n"])
_TOP_KEYS = st.sampled_from(["server_name", "max_payload", "port", "jsemu_test_var", '"max_payload"', "'port'"])


def _values(depth: int) -> st.SearchStrategy[str]:
    if depth == 0:
        return _SCALAR
    inner = _values(depth - 1)
    array = st.lists(inner, max_size=3).flatmap(
        lambda items: st.sampled_from([", ", ",\n", "\n"]).map(lambda sep: "[" + sep.join(items) + "]")
    )
    entry = st.tuples(st.sampled_from(["a", '"b c"', "d_e"]), _SEP, inner).map("".join)
    block = st.lists(entry, max_size=3).flatmap(
        lambda items: st.sampled_from([", ", "\n", "; "]).map(lambda sep: "{" + sep.join(items) + "}")
    )
    return st.one_of(inner, array, block)


_LINE = st.tuples(_TOP_KEYS, _SEP, _values(2), _END).map("".join)
_COMMENT = st.sampled_from(["# note\n", "// note\n", "\n"])


@st.composite
def _files(draw: st.DrawFn) -> str:
    lines = draw(st.lists(st.one_of(_LINE, _COMMENT), min_size=1, max_size=4))
    if draw(st.booleans()):
        lines.insert(0, draw(st.sampled_from(["jsemu_test_var = 5\n", "jsemu_test_var: {a: 1}\n"])))
    text = "".join(lines)
    if draw(st.booleans()):
        text = "{\n" + text + "}\n"
    return text


_ODD = list("{}[]()\"'#/=:;,$\\\n \t-.0aZ\x00")


@st.composite
def _corrupted(draw: st.DrawFn) -> str:
    text = draw(_files())
    kind = draw(st.sampled_from(["cut", "insert", "delete", "keep"]))
    at = draw(st.integers(0, len(text)))
    if kind == "cut":
        return text[:at]
    if kind == "insert":
        return text[:at] + draw(st.sampled_from(_ODD)) + text[at:]
    if kind == "delete":
        return text[:at] + text[at + 1 :]
    return text


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=_corrupted())
@example(text="server_name: abc\nmax_payload: 3gib\n")  # int32 in Go: too big where it is read
@example(text="max_control_line: 2147483648\n")
def test_a_generated_file_reads_as_nats_server_reads_it(text: str) -> None:
    _compare(text)


# --- the lexer's error paths, one file each --------------------------------------------------------

CASES = {
    "eof-in-quoted-key": '"port',
    "eof-in-single-quoted-key": "'port",
    "key-alone": "port",
    "key-alone-newline": "port\n",
    "key-colon-eof": "port:",
    "key-value-then-stray-word": "port 1\nx",
    "stray-character": "@",
    "stray-array-end": "port: 4222\n]",
    "array-left-open": "jsemu_test_var = [1, 2",
    "array-double-comma": "jsemu_test_var = [1,,2]",
    "array-semicolon": "jsemu_test_var = [1; 2]",
    "map-left-open": "jsemu_test_var { a",
    "map-open-after-value": "jsemu_test_var { a: 1",
    "map-quoted-key-open": 'jsemu_test_var { "a',
    "map-single-quoted-key-open": "jsemu_test_var { 'a",
    "map-key-separator-first": "jsemu_test_var { : 1 }",
    "map-array-end": "jsemu_test_var { ] }",
    "map-comma-value": "jsemu_test_var { a: , }",
    "map-bad-terminator": "jsemu_test_var { a: 1 2 }",
    "top-key-separator-first": "= 5",
    "top-value-then-junk": "port: 1 2",
    "block-value-then-junk": "{ port: 1 x }",
    "block-end-then-junk": "{ { port: 1 } x }",
    "float-leading-dot": "jsemu_test_var: .5",
    "float-no-digit": "jsemu_test_var: 1.x",
    "negative-no-digit": "jsemu_test_var: -x",
    "negative-dot": "jsemu_test_var: -.5",
    "date-short-year": "jsemu_test_var: 20-01-01",
    "date-bad": "jsemu_test_var: 2020-01-0xT",
    "date-bad-separator": "jsemu_test_var: 2020-01-01X",
    "date-out-of-range": "jsemu_test_var: 2020-13-01T00:00:00Z\nport: $jsemu_test_var",
    "hex-escape-short": 'server_name: "a\\x4"',
    "hex-escape-bad": 'server_name: "a\\xZZ"',
    "hex-escape-newline": 'server_name: "a\\x\n"',
    "bad-escape": 'server_name: "a\\q"',
    "raw-block-open": "server_name: (\nabc\n",
    "raw-block": "server_name: (\nabc\n)\n",
    "include-array": "include [a]",
    "include-map": "include {a}",
    "include-block": "include (a)",
    "include-number": "include 5",
    "include-escape": "include \\a",
    "include-newline": "include \n",
    "include-open-quote": 'include "a',
    "include-open-single-quote": "include 'a",
    "include-missing": 'include "nope.conf"',
    "variable-missing": "port: $nope",
    "variable-from-environment": "server_name: $HOME",
    "variable-found": "jsemu_test_var = 4333\nport: $jsemu_test_var",
    "variable-in-block": "jsemu_test_var = 4333\n{ port: $jsemu_test_var }",
    "variable-bcrypt": "server_name: $2a$11$abc",
    "integer-out-of-range": "max_payload: 99999999999999999999",
    "size-wraps": "max_payload: 9EB",
    "size-unknown-suffix": "max_payload: 1kbb",
    "size-then-digit": "max_payload: 1k3",
    "suffix-string": "server_name: 12e",
    "nul-byte": "server_name: a\x00b",
    "comment-slash-alone": "port: 1 / 2",
    "comment-top-slash": "/ port: 1",
    "json-trailing-brace": "port: -1\n}\n",
    "map-key-slash": "jsemu_test_var { /a: 1 }",
    "duplicate-key": "port: 1\nport: 2",
    "empty": "",
    "crlf": "port: 4333\r\nserver_name: x\r\n",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_lexer_error_path_as_nats_server(name: str) -> None:
    _compare(CASES[name])


def test_include_and_variable_positions(tmp_path: Path) -> None:
    """An included file's key is placed in that file; a variable's value at the key that reads it."""
    (tmp_path / "inc.conf").write_text("\n  max_payload: abc\n")
    conf = tmp_path / "c.conf"
    conf.write_text("jsemu_test_var = x\ninclude inc.conf\n")
    _check(conf)
    conf.write_text("jsemu_test_var = x\n  port: $jsemu_test_var\n")
    _check(conf)
