"""JetStream API errors as the server sends them: ``{"code":..,"err_code":..,"description":..}``.

The table itself lives in :mod:`.error_table` (copied from nats-server's ``errors.json``);
this module turns entries into exceptions handlers can raise, and keeps Go's ``Unless``
rule: wrapping an error that already is an API error returns it unchanged.
"""

from __future__ import annotations

from typing import Any

from .error_table import ERRORS

__all__ = ["ApiError", "api_error", "wrap_error"]


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


def api_error(constant: str, **params: object) -> ApiError:
    """Build the error named by nats-server's constant, filling ``{placeholders}``."""
    code, err_code, description = ERRORS[constant]
    for key, value in params.items():
        description = description.replace("{" + key + "}", str(value))
    return ApiError(code, err_code, description)


def wrap_error(constant: str, err: Exception | str) -> ApiError:
    """Go's ``NewJS...Error(err, Unless(err))``: an ApiError passes through, anything
    else becomes the ``{err}`` of ``constant``."""
    if isinstance(err, ApiError):
        return err
    return api_error(constant, err=str(err))
