"""Helpers shared by the test packages: the real nats-server runner, the raw-socket client, the
side-by-side pair harness, polling and naming. Fixtures live in the ``conftest.py`` files, which
import from here."""
