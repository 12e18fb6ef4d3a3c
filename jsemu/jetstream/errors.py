"""JetStream API errors as the server sends them: ``{"code":..,"err_code":..,"description":..}``.

The table itself is :class:`~jsemu.protocol.texts.ApiErrors` (copied from nats-server's
``errors.json``), referenced by attribute (``api_error(ApiErrors.JSStreamNotFoundErr)``) so
a misspelt constant fails at import; this module turns entries into exceptions handlers can
raise, and keeps Go's ``Unless`` rule: wrapping an error that already is an API error
returns it unchanged.
"""

from __future__ import annotations

from typing import Any

from ..protocol.texts import ApiErrors, ApiErrorText

__all__ = ["ApiError", "ApiErrors", "api_error", "response_type", "wrap_error"]

_TYPE_PREFIX = "io.nats.jetstream.api.v1."


def response_type(suffix: str) -> str:
    """The ``type`` of an API response, an error reply's too (``io.nats.jetstream.api.v1.<suffix>``);
    here, below every part, for the replies sent outside the ``$JS.API`` dispatch (a restore's
    completion)."""
    return _TYPE_PREFIX + suffix


class ApiError(Exception):
    """One JetStream API error; ``as_dict()`` has the key order of Go's ``ApiError``."""

    __slots__ = ("code", "description", "err_code")

    def __init__(self, code: int, err_code: int, description: str) -> None:
        super().__init__(description)
        self.code = code
        self.err_code = err_code
        self.description = description

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code}
        if self.err_code:
            out["err_code"] = self.err_code
        if self.description:
            out["description"] = self.description
        return out

    def __repr__(self) -> str:
        return f"ApiError({self.code}, {self.err_code}, {self.description!r})"


def api_error(text: ApiErrorText, **params: object) -> ApiError:
    """Build the error of one :class:`ApiErrors` entry, filling ``{placeholders}``."""
    code, err_code, description = text
    for key, value in params.items():
        description = description.replace("{" + key + "}", str(value))
    return ApiError(code, err_code, description)


def wrap_error(text: ApiErrorText, err: Exception | str) -> ApiError:
    """Go's ``NewJS...Error(err, Unless(err))``: an ApiError passes through, anything
    else becomes the ``{err}`` of ``text``."""
    if isinstance(err, ApiError):
        return err
    return api_error(text, err=str(err))
