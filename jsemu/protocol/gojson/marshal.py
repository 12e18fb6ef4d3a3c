"""Encode like Go's ``json.Marshal``, for every JSON reply and advisory the server sends."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["dumps"]

_HTML_SAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def dumps(value: Any) -> str:
    """Encode like Go's ``json.Marshal``: compact, raw UTF-8, HTML characters escaped.

    Go escapes ``<``, ``>`` and ``&`` (so ``foo.>`` comes out as ``foo.\\u003e``); the
    characters only occur inside strings, so translating the whole text is safe.
    """
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).translate(_HTML_SAFE)
