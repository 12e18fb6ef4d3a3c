"""Go's ``encoding/json`` as nats-server runs it: :mod:`.unmarshal` (``json.Unmarshal`` and
``json.Marshal``) and :mod:`.scanner` (the exact decoder of JetStream API requests)."""

from .unmarshal import *
from .unmarshal import __all__ as __all__
