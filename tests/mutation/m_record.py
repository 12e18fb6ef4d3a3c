"""Planted bugs in record and replay (``jsemu/sessions/``), and a jsemu bug that a recorded
nats-server session must reveal when it is replayed against jsemu."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_NORMALISE = "jsemu/sessions/normalise.py"
_REPLAYER = "jsemu/sessions/replayer.py"
_RECORDER = "jsemu/sessions/recorder.py"
_REPLAY_PY = "tests/sessions/test_replay_nats_py.py"
_NORMALISE_TESTS = "tests/sessions/test_normalise.py"

MUTATIONS: list[Mutation] = [
    Mutation(
        "record_pass_not_redacted",
        "sessions",
        "jsemu/sessions/redact.py",
        'SECRET_KEYS = ("pass", "auth_token", "sig", "jwt")',
        'SECRET_KEYS = ("password", "auth_token", "sig", "jwt")',
        ("tests/sessions/test_recorder.py",),
        "CONNECT's pass written to the session file in clear",
    ),
    Mutation(
        "record_server_close_as_client",
        "sessions",
        _RECORDER,
        'by = "client" if direction == "c2s" or self._stopping else "server"',
        'by = "client"',
        ("tests/sessions/test_recorder.py::test_proxy_changes_nothing_and_records_every_byte",),
        "a connection the server closed (-ERR) recorded as closed by the client",
    ),
    Mutation(
        "replay_times_compared",
        "sessions",
        _NORMALISE,
        '        return "<time>" if value != _ZERO_TIME and _TIME.fullmatch(value) else value\n',
        "        return value\n",
        (f"{_REPLAY_PY}::test_recorded_session_replays_without_difference",),
        "JSON times (created, ts) compared: every replay of a JetStream session differs",
    ),
    Mutation(
        "replay_server_port_compared",
        "sessions",
        _NORMALISE,
        '        "client_ip",\n        "port",\n',
        '        "client_ip",\n',
        (f"{_REPLAY_PY}::test_recorded_session_replays_without_difference",),
        "INFO's port compared: no replay against a server on another port matches (the server id is"
        " matched up as well as left out, so leaving it in is no bug)",
    ),
    Mutation(
        "replay_aliases_message_data",
        "sessions",
        _NORMALISE,
        "                or x not in names\n",
        "",
        (_NORMALISE_TESTS, "tests/sessions/test_command.py"),
        "a random-looking word in message data (base64) matched up as a server-chosen name: a planted"
        " data difference goes unseen",
    ),
    Mutation(
        "replay_frame_rank_off_by_one",
        "sessions",
        _REPLAYER,
        "                c.received + 1,\n",
        "                c.received,\n",
        (f"{_REPLAY_PY}::test_fault_planted_in_jsemu_is_reported_at_its_frame",),
        "the difference reported one frame early",
    ),
    Mutation(
        "replay_server_chosen_name_not_sent",
        "sessions",
        _REPLAYER,
        '            out.append(line if line[:7].upper() == b"CONNECT" else self.aliases.rewrite_client(line))\n',
        "            out.append(line)\n",
        (_NORMALISE_TESTS,),
        "the client's request names the consumer the recorded server chose, not this one's",
    ),
    Mutation(
        "record_replay_catches_upto_sequence",
        "protocol",
        "jsemu/protocol/texts.py",
        "Nats-UpTo-Sequence: %d",
        "Nats-Upto-Sequence: %d",
        (f"{_REPLAY_PY}::test_recorded_session_replays_without_difference",),
        "a Direct Get multi_last batch's EOB header misspelt: the recorded nats-server session replayed"
        " against jsemu shows it",
    ),
    Mutation(
        "session_connections_unbounded",
        "sessions",
        "jsemu/sessions/format.py",
        "            if len(conns) == MAX_CONNECTIONS:\n",
        "            if len(conns) > MAX_CONNECTIONS:\n",
        ("tests/sessions/test_format.py",),
        "a session file may make a replay open one connection more than the limit",
    ),
]
