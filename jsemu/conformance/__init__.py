"""The conformance table: Direct Get scenarios (``cases.py``) with the replies nats-server
2.15.1 gave (``fixtures.json``), a raw-socket runner for any server (``runner.py``) and the
``jsemu conformance`` command (``command.py``).

The fixtures are recorded from the real server with ``python -m tests.conformance.record``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["FIXTURES", "load_fixtures"]

FIXTURES = Path(__file__).with_name("fixtures.json")


def load_fixtures() -> dict[str, Any]:
    """Scenario id -> [{"request": ..., "reply": [frames]}], plus ``_meta``; {} if absent."""
    if not FIXTURES.exists():
        return {}
    data: dict[str, Any] = json.loads(FIXTURES.read_text())
    return data
