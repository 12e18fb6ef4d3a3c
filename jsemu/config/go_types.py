"""The Go type nats-server's configuration parser gives a value: its conversion errors name it
(``interface conversion: interface {} is int64, not string``), and every block's checks quote it."""

from __future__ import annotations

import datetime
from typing import Any


def go_type(value: Any) -> str:
    """The Go type of a parsed configuration value, as nats-server's errors spell it."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    if isinstance(value, datetime.datetime):
        return "time.Time"
    return "string"
