"""A scoped signing key's template made into one user's permissions, as nats-server's
``processUserPermissionsTemplate`` makes it.

An account's *scoped* signing key carries a template of user permissions and limits; a user it
signs gets that template, not its own claims. In the template's ``pub``/``sub`` ``allow`` and
``deny`` lists (nowhere else), each ``{{ function }}`` is filled in:

* ``name()``, ``subject()``: the user JWT's ``name`` and key; ``account-name()``,
  ``account-subject()``: the account's ``name`` and key;
* ``tag(x)``, ``account-tag(x)``: every value ``v`` of a tag ``x:v`` of the user (or the
  account), one subject per value, the product of them for several tags in one subject.

The function names are compared without case and with the blanks around them trimmed, but Go
trims the ``tag(``/``account-tag(`` prefix with its case, so ``{{TAG(x)}}`` looks up the tag
``tag(x`` (nothing: a faithful oddity). ``x`` is lowered, the tags are compared as written.
An allow entry that comes out as no valid subject (a missing tag, a blank in a name) is left
out, and an allow list left empty denies everything (``>`` added to the deny list); a deny
entry that does, an unknown function, or more than 4096 subjects refuse the login
(:class:`TemplateError`).
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from ..subjects import is_valid_subject

__all__ = ["MAX_EXPANSIONS", "TemplateError", "TemplateValues", "fill_template"]

_MUSTACHE = re.compile(r"\{\{([^}]+)\}\}")
#: ``maxPermTemplateSubjectExpansions``.
MAX_EXPANSIONS = 4096
_FIXED = ("name()", "subject()", "account-name()", "account-subject()")


class TemplateError(ValueError):
    """The template cannot be filled in for this user: nats-server refuses the login."""


class TemplateValues:
    """What the functions of a template read for one user of one account."""

    def __init__(
        self, name: str, subject: str, account_name: str, account_subject: str, tags: Any, account_tags: Any
    ) -> None:
        self.fixed = dict(zip(_FIXED, (name, subject, account_name, account_subject), strict=True))
        self.tags = {"tag": _strings(tags), "account-tag": _strings(account_tags)}

    def values(self, op: str) -> list[str] | None:
        """The values of one function (``None``: a tag with none); :class:`TemplateError`
        for a function nats-server does not know."""
        low = op.lower()
        if low in self.fixed:
            return [self.fixed[low]]
        for function in ("tag", "account-tag"):
            opener = function + "("
            if low.startswith(opener) and op.endswith(")"):
                name = op.removeprefix(opener).removesuffix(")")  # Go's TrimPrefix: with its case
                prefix = name.lower() + ":"
                found = [tag.removeprefix(prefix) for tag in self.tags[function] if tag.startswith(prefix)]
                return found or None
        raise TemplateError(f"template operation {op!r} is not defined")


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _fill_list(entries: list[Any], values: TemplateValues, deny: bool) -> list[Any]:
    if not any(isinstance(e, str) and _MUSTACHE.search(e) for e in entries):
        return entries
    out: list[Any] = []
    for entry in entries:
        text = str(entry)
        sources = [m.group(0) for m in _MUSTACHE.finditer(text)]
        lists: list[list[str]] = []
        for source in sources:
            found = values.values(source[2:-2].strip())
            if found is None and deny:
                raise TemplateError(f"generated invalid subject {text!r}: tag is not defined")
            lists.append(found if found is not None else [" "])  # Go: a subject that cannot be
        count = 1
        for found in lists:
            count *= len(found)
        if count > MAX_EXPANSIONS or len(out) > MAX_EXPANSIONS - count:
            raise TemplateError(f"template expansion exceeds limit: {MAX_EXPANSIONS}")
        for choice in itertools.product(*lists):
            subject = text
            for source, value in zip(sources, choice, strict=True):
                subject = subject.replace(source, value)
            if is_valid_subject(subject):
                out.append(subject)
            elif deny:
                raise TemplateError("generated invalid subject")
    return out


def fill_template(template: dict[str, Any], values: TemplateValues) -> dict[str, Any]:
    """The template with its ``pub``/``sub`` lists filled in (a copy)."""
    filled = dict(template)
    for direction in ("sub", "pub"):
        rules = template.get(direction)
        if not isinstance(rules, dict):
            continue
        rules = dict(rules)
        allow, deny = rules.get("allow"), rules.get("deny")
        if isinstance(allow, list):
            rules["allow"] = _fill_list(allow, values, deny=False)
        if isinstance(deny, list):
            rules["deny"] = _fill_list(deny, values, deny=True)
        if isinstance(allow, list) and allow and not rules["allow"]:
            denied = list(rules.get("deny") or [])
            rules["deny"] = denied if ">" in denied else [*denied, ">"]
        filled[direction] = rules
    return filled
