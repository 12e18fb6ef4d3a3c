"""Record and replay of real NATS sessions: ``jsemu record`` (a transparent proxy that writes
a session file), ``jsemu replay`` (re-sends a session's client bytes to any server and shows the
first difference per connection) and ``jsemu conformance --sessions DIR``.

Modules: ``format.py`` (the session file, version 1, and its reader that refuses anything
else), ``redact.py`` (CONNECT's credentials kept out of the file), ``recorder.py`` (the
proxy), ``normalise.py`` (what always differs between two runs), ``replayer.py`` (the replayer),
``targets.py`` (a fresh jsemu or nats-server to replay against), ``command.py`` (the command
line). Layers: ``protocol`` and ``app`` below, ``conformance`` beside (its spawn of
nats-server); nothing below imports this package.
"""

from __future__ import annotations

from .format import Session, SessionFileError, read_session
from .recorder import Recorder
from .replayer import Difference, ReplayResult, replay

__all__ = ["Difference", "Recorder", "ReplayResult", "Session", "SessionFileError", "read_session", "replay"]
