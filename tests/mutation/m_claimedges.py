"""Planted bugs in the operator-mode claim edges (issue 34, the ``claimedges`` part): an
exporter's update re-checking imports already wired, an expired account looked up again at login,
auth callout users issued by a scoped signing key."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_REV = "tests/server/test_operator_export_revisions.py"
_REWIRED = f"{_REV}::test_exporter_update_rechecks_wired_imports"

MUTATIONS: list[Mutation] = [
    Mutation(
        "claimedges_rewire_only_own_imports",
        "server",
        "jsemu/server/claim_live.py",
        "        self._rewire_imports()\n",
        "        if old is None or old.imports != account.imports:\n            self._rewire_imports()\n",
        (_REWIRED,),
        "an exporter's update leaves the imports other accounts wired from it as they were",
    ),
    Mutation(
        "claimedges_position_services_only",
        "server",
        "jsemu/server/operator_auth.py",
        "            if positioned is False:",
        '            if positioned is False and imp.kind == "service":',
        (_REWIRED,),
        "a stream import its export's account token position no longer lets in keeps flowing",
    ),
]
