"""The monitoring port's index page (``/``): links to the endpoints, as nats-server's ``HandleRoot``.

nats-server answers ``/`` with a small HTML page linking its endpoints in a fixed order, each
link relative (``./varz``) so that the page works behind a base path; tools and people
starting from ``http://host:8222/`` follow those links. jsemu's page lists the same entries in
the same order with the same labels (the ones jsemu does not serve answer 404 when followed,
as ``/raftz`` does on a nats-server without Raft groups), and its version link names the
nats-server release jsemu answers as. nats-server's logo and favicon are left out: the page
loads nothing from the network.

:data:`ENTRIES` is nats-server's table; pages of jsemu's own on the port (the console) come first,
from the server's ``http_app`` (its ``index_links``).
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from ..version import NATS_VERSION

__all__ = ["ENTRIES", "index_page"]

#: (label, path) of each link, in nats-server 2.15.1's order.
ENTRIES: list[tuple[str, str]] = [
    ("General", "/varz"),
    ("JetStream", "/jsz"),
    ("Connections", "/connz"),
    ("Accounts", "/accountz"),
    ("Account Stats", "/accstatz"),
    ("Subscriptions", "/subsz"),
    ("Routes", "/routez"),
    ("LeafNodes", "/leafz"),
    ("Gateways", "/gatewayz"),
    ("Raft Groups", "/raftz"),
    ("Health Probe", "/healthz"),
    ("Expvar", "/debug/vars"),
]

_HEAD = """<html lang="en">
	<head>
	<style type="text/css">
		body { font-family: ui-sans-serif,system-ui,-apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,"Helvetica Neue",Arial,"Noto Sans",sans-serif; font-size: 18; font-weight: light-bold; margin-left: 32px }
		a { display:block; margin-left: 7px; padding-bottom: 6px; color: rgb(72 72 92); text-decoration: none }
		a:hover { font-weight: 600; color: rgb(59 50 202) }
		a.help { display:inline; font-weight: 600; color: rgb(59 50 202); font-size: 20}
		a.last { padding-bottom: 16px }
		a.version { font-size: 14; font-weight: 400; width: 312px; text-align: right; margin-top: -2rem }
		a.version:hover { color: rgb(22 22 32) }
		.endpoint { font-size: 12px; color: #999; font-family: monospace; display: none }
		a:hover .endpoint { display: inline }

	</style>
	</head>
	<body>
"""


def index_page(first: Sequence[tuple[str, str]] = ()) -> bytes:
    """The page's HTML; ``first``: (label, path) of jsemu's own pages, linked above nats-server's."""
    lines = [
        _HEAD,
        f"\t<a href=https://github.com/nats-io/nats-server/tree/v{NATS_VERSION} class='version'>v{NATS_VERSION}</a>\n",
        "\t<br/>",
    ]
    entries = [*first, *ENTRIES]
    for i, (label, path) in enumerate(entries):
        last = " class=last" if i == len(entries) - 1 else ""
        lines.append(f'\t<a href=.{path}{last}>{escape(label)}<span class="endpoint"> {path}</span></a>')
    lines.append(
        '    <a href=https://docs.nats.io/running-a-nats-service/nats_admin/monitoring class="help">Help</a>\n'
        "  </body>\n</html>"
    )
    return "\n".join(lines).encode()
