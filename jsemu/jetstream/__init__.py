"""JetStream of one account: streams, consumers, Direct Get and the ``$JS.API`` that drives them.

Its parts, lowest first; each imports only those before it, type-only imports included
(``tests/test_architecture.py`` holds the order):

- ``errors.py``, ``requests.py``: the API's error bodies and Go request structs; ``clock_timers.py``
  (deadlines on the server's clock), ``internal.py`` (the server-side subscriber), ``context.py``
  (the small protocols of the services the parts share);
- ``events/`` (every ``$JS.EVENT``), ``limits/`` (an account's counts and bytes), ``directget/``
  (the Direct Get responders), ``links/`` (mirrors and sources), ``cluster/`` (the simulated
  cluster's peers, replication, leaders and quorum);
- ``streams/`` (a stream, its publish path and features), ``consumers/`` (the delivery engine),
  ``persistence/`` (what outlives a restart);
- ``service.py`` (``JetStream``: the account's streams and what they share), ``api/`` (the
  ``$JS.API`` endpoint and its handlers), ``monitoring.py`` (figures for ``/jsz`` and ``/varz``).

The package sits above ``protocol``, ``store`` and ``server`` and below ``control`` and the
composition root (``jsemu/app.py``), which makes one ``JetStream`` and one ``JetStreamApi`` per
account with JetStream.
"""
