"""The ``@remote`` registry of the control plane: which methods ``$JSEMU.API`` serves, and
the one error a control request can end with."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["ControlError", "remote", "remote_methods"]

_F = TypeVar("_F", bound=Callable[..., Any])


def remote(fn: _F) -> _F:
    """Mark a :class:`ControlPlane` method as reachable over ``$JSEMU.API.<METHOD>``."""
    fn.__jsemu_remote__ = True  # type: ignore[attr-defined]
    return fn


def remote_methods(cls: type) -> dict[str, Callable[..., Any]]:
    """The methods marked with :func:`remote` by name, in definition order (an alias
    counts under its own name); a mixin's methods (``ConsumerControls``) come after the
    class's own."""
    out: dict[str, Callable[..., Any]] = {}
    for klass in cls.__mro__:
        for name, attr in vars(klass).items():
            if getattr(attr, "__jsemu_remote__", False) and name not in out:
                out[name] = attr
    return out


class ControlError(ValueError):
    """A control request that names nothing that exists or can not be carried out."""
