"""Every ``$JS.EVENT`` JetStream publishes: the advisories and metrics (``advisories.py``), the
stream and consumer action advisories, and the API audit (``api_audit.py``). Each is built
only while its subject has a listener. Near the bottom of jetstream: it needs only the clock,
the way out and the domain (``context.Advising``).
"""
