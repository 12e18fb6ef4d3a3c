"""``--client_advertise`` and ``--cluster_advertise`` side by side with nats-server.

Captured from nats-server 2.15.1 (a 2-node cluster, the first started with
``--client_advertise adv.example:4333 --cluster_advertise radv.example:6333``):

* the first server's client INFO has ``host``/``port`` of the advertised URL, and its own
  entry in ``connect_urls`` is that URL (first, then the peer's listener address);
* the second server's clients see the advertised URL in ``connect_urls`` (after its own);
* the first server's route INFO has ``host``/``port`` of the cluster advertise URL and
  ``ip`` ``nats-route://radv.example:6333/``;
* ``/varz`` ``host``/``port`` are the advertised ones;
* a value without a port takes the listener's; one nats-server cannot read stops it at
  start-up with ``[FTL] Error setting server INFO with ClientAdvertise value of V, err=E``
  (exit 1), ``E`` in Go's words (``net.SplitHostPort``, ``strconv.Atoi``).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jsemu.server.advertise import AdvertiseError, parse_host_port
from tests.support.cluster import Node, start_node, stop_cluster, wait_routes
from tests.support.servers import nats_server_binary

KINDS = ["real", "jsemu"]


def _info(port: int) -> dict[str, object]:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        buf = b""
        while b"\r\n" not in buf:
            buf += sock.recv(65536)
    info: dict[str, object] = json.loads(buf.split(b"\r\n")[0][5:])
    return info


def _urls_settled(node: Node, want: int, timeout: float = 5.0) -> dict[str, object]:
    deadline = time.monotonic() + timeout
    info = _info(node.port)
    while len(info.get("connect_urls") or []) < want and time.monotonic() < deadline:  # type: ignore[arg-type]
        time.sleep(0.05)
        info = _info(node.port)
    return info


@pytest.fixture(params=KINDS, scope="module")
def advertised_cluster(request: pytest.FixtureRequest) -> object:
    kind = request.param
    first = start_node(kind, extra=["--client_advertise", "adv.example:4333", "--cluster_advertise", "radv.example"])
    nodes = [first]
    try:
        nodes.append(start_node(kind, [first.route_url]))
        wait_routes(nodes)
        yield nodes
    finally:
        stop_cluster(nodes)


def test_client_advertise_in_info_and_connect_urls(advertised_cluster: list[Node]) -> None:
    first, second = advertised_cluster
    info = _urls_settled(first, 2)
    assert (info["host"], info["port"]) == ("adv.example", 4333)
    assert info["connect_urls"] == ["adv.example:4333", f"127.0.0.1:{second.port}"]
    info = _urls_settled(second, 2)
    assert (info["host"], info["port"]) == ("127.0.0.1", second.port)
    assert info["connect_urls"] == [f"127.0.0.1:{second.port}", "adv.example:4333"]
    varz = first.get("varz")
    assert (varz["host"], varz["port"]) == ("adv.example", 4333)


def test_cluster_advertise_in_route_info(advertised_cluster: list[Node]) -> None:
    first, _ = advertised_cluster
    with socket.create_connection(("127.0.0.1", first.route_port), timeout=5) as sock:
        buf = b""
        while b"\r\n" not in buf:
            buf += sock.recv(65536)
    info = json.loads(buf.split(b"\r\n")[0][5:])
    # no port in the value: the cluster listener's
    assert (info["host"], info["port"]) == ("radv.example", first.route_port)
    assert info["ip"] == f"nats-route://radv.example:{first.route_port}/"
    assert info["connect_urls"] == ["adv.example:4333"]


def _fatal(kind: str, value: str, flag: str = "--client_advertise") -> tuple[int, str]:
    program = [sys.executable, "-m", "jsemu", "serve", "--no-jetstream"] if kind == "jsemu" else [nats_server_binary()]
    args = [*program, "-a", "127.0.0.1", "-p", "-1", "--cluster", "nats://127.0.0.1:-1", flag, value]
    proc = subprocess.Popen(args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        _, err = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        return -1, "still running"
    last = err.strip().splitlines()[-1]
    return proc.returncode, last[last.find("[FTL]") :]


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--client_advertise", "h:abc"),
        ("--client_advertise", "nats://h:1"),
        ("--cluster_advertise", "[::1"),
    ],
)
def test_unreadable_advertise_is_fatal_as_nats_server(flag: str, value: str) -> None:
    assert _fatal("jsemu", value, flag) == _fatal("real", value, flag)


# Go's parseHostPort on values nats-server was run with (see the module docstring).
GO_CASES = {
    "adv.example:4333": ("adv.example", 4333),
    "nohost": ("nohost", 4222),
    ":4333": ("", 4333),
    "h:0": ("h", 4222),
    "h:-1": ("h", 4222),
    "[::1]:5": ("::1", 5),
    "[::1]": ("::1", 4222),
    " h : 7 ": ("h", 7),
    "h:+7": ("h", 7),
}
GO_ERRORS = {
    "h:abc": 'strconv.Atoi: parsing "abc": invalid syntax',
    "nats://h:1": "address nats://h:1: too many colons in address",
    "::1": "address ::1: too many colons in address",
    "[::1": "address [::1: missing ']' in address",
    "[h]x:1": "address [h]x:1:4222: missing port in address",  # Go retries with the port appended
    "h]:1": "address h]:1: unexpected ']' in address",
    "h:1_0": 'strconv.Atoi: parsing "1_0": invalid syntax',
    "h:99999999999999999999": 'strconv.Atoi: parsing "99999999999999999999": value out of range',
}


@pytest.mark.parametrize(("value", "want"), GO_CASES.items())
def test_parse_host_port(value: str, want: tuple[str, int]) -> None:
    assert parse_host_port(value, 4222) == want


@pytest.mark.parametrize(("value", "want"), GO_ERRORS.items())
def test_parse_host_port_errors(value: str, want: str) -> None:
    with pytest.raises(AdvertiseError) as exc:
        parse_host_port(value, 4222)
    assert str(exc.value) == want


@given(st.text(alphabet="ab:[]0129 -+", max_size=12))
def test_parse_host_port_never_crashes(value: str) -> None:
    try:
        host, port = parse_host_port(value, 4222)
    except AdvertiseError:
        return
    assert isinstance(host, str)
    assert isinstance(port, int)


def test_reload_of_client_advertise_is_refused() -> None:
    """jsemu does not put a new ``client_advertise`` in force on reload, so it refuses it."""
    from jsemu.server.options import ServerOptions
    from jsemu.server.reload import ReloadRefused, diff_options

    with pytest.raises(ReloadRefused, match="client_advertise"):
        diff_options(ServerOptions(), ServerOptions(client_advertise="a:1"))
    assert diff_options(ServerOptions(client_advertise="a:1"), ServerOptions(client_advertise="a:1")) is not None
