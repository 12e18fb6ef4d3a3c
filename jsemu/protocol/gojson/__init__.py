"""Go's ``encoding/json`` as nats-server 2.15.1 runs it: what it accepts, what it decodes to,
and the exact text of what it rejects.

Clients see Go's JSON behaviour in two ways: which requests work (case-insensitive keys,
the last duplicate winning, ``null`` ignored, strict integer types) and, for anything
JetStream refuses, the error text itself (``invalid JSON: json: cannot unmarshal string
into Go struct field StreamConfigRequest.max_msgs of type int64``). So there are two
decoders, chosen by whether the wording can reach a client:

* :func:`decode_request` (:mod:`.decoder`) -- the exact one. Every ``$JS.API`` request
  (strict: ``json.Decoder`` with ``DisallowUnknownFields``), and with ``strict=False``
  the bodies nats-server reads with ``json.Unmarshal`` and answers with its error: pull
  requests, NAK options, unpin requests and Direct Get (whose responder decodes the
  common shapes itself first, per request, and comes here for the rest). Go >= 1.25 runs v1 on top of
  ``encoding/json/v2``, and the texts are that implementation's. It is built in layers,
  each a module of its own that imports only those above it here:

  - :mod:`.runes` -- ``unicode/utf8``, ``strconv.Quote``, ``strings.EqualFold``: text
    as Go sees it (invalid UTF-8 included), for error texts and key matching;
  - :mod:`.errors` -- :class:`GoJSONError` and its Go kinds, whose ``str()`` is Go's text;
  - :mod:`.scanner` -- ``jsontext.Decoder``'s grammar check: :func:`scan_values` yields
    each top-level value's span or raises Go's syntax error, buffer quirks and offsets
    included;
  - :mod:`.tree` -- a checked value as nodes that keep both the decoded value and its
    source text;
  - :mod:`.types` -- the declared Go types (:class:`GoStruct`, ``T_INT64``, ...) that
    request structs are written with (``jetstream/api/requests.py``);
  - :mod:`.rfc3339` -- ``time.Time.UnmarshalText`` for ``T_TIME`` fields;
  - :mod:`.decoder` -- ``json/v2``'s unmarshal under v1 options into those types.

* :func:`decode_struct` (:mod:`.unmarshal`) -- accept or reject only, for CONNECT and
  INFO: nats-server closes the connection without a word, so Python's C
  ``json`` parser with Go's rules on top is enough, into a flat :class:`StructSpec`.

:func:`dumps` (:mod:`.marshal`) is ``json.Marshal``'s output (``>`` as ``\\u003e``) for
every JSON the server sends. Callers import from this package, not its modules.
"""

from .decoder import decode_request, go_unmarshal_string, unmarshal_request
from .errors import GoJSONError, GoSyntaxError, GoUnmarshalTypeError
from .marshal import dumps
from .rfc3339 import parse_go_time
from .runes import go_fold, go_quote, go_quote_rune
from .scanner import scan_values
from .types import (
    GO_ZERO_TIME_NS,
    T_ANY,
    T_BOOL,
    T_DURATION,
    T_FLOAT32,
    T_FLOAT64,
    T_INT,
    T_INT8,
    T_INT16,
    T_INT32,
    T_INT64,
    T_STRING,
    T_TIME,
    T_UINT,
    T_UINT8,
    T_UINT16,
    T_UINT32,
    T_UINT64,
    GoEnum,
    GoMap,
    GoPointer,
    GoScalar,
    GoSlice,
    GoStruct,
    GoType,
)
from .unmarshal import (
    GoNumber,
    StructSpec,
    decode_struct,
    go_any,
    go_bool,
    go_int,
    go_string,
    go_string_list,
    go_uint,
)

__all__ = [
    "GO_ZERO_TIME_NS",
    "T_ANY",
    "T_BOOL",
    "T_DURATION",
    "T_FLOAT32",
    "T_FLOAT64",
    "T_INT",
    "T_INT8",
    "T_INT16",
    "T_INT32",
    "T_INT64",
    "T_STRING",
    "T_TIME",
    "T_UINT",
    "T_UINT8",
    "T_UINT16",
    "T_UINT32",
    "T_UINT64",
    "GoEnum",
    "GoJSONError",
    "GoMap",
    "GoNumber",
    "GoPointer",
    "GoScalar",
    "GoSlice",
    "GoStruct",
    "GoSyntaxError",
    "GoType",
    "GoUnmarshalTypeError",
    "StructSpec",
    "decode_request",
    "decode_struct",
    "dumps",
    "go_any",
    "go_bool",
    "go_fold",
    "go_int",
    "go_quote",
    "go_quote_rune",
    "go_string",
    "go_string_list",
    "go_uint",
    "go_unmarshal_string",
    "parse_go_time",
    "scan_values",
    "unmarshal_request",
]
