"""The ``$JS.API`` of an account: the top of jetstream, above the service it calls.

``dispatch.py`` is the endpoint (the ``$JS.API.>`` subscription, statistics, audit),
``table.py`` the one list of handler families, ``registry.py`` the ``@api`` registry; the
families are ``streams.py`` (and account info), ``snapshots.py``, ``consumers.py`` (pause and
unpin included) and ``cluster.py`` (step-downs); ``not_enabled.py`` answers for an account
without JetStream. Handlers are thin: check the request in nats-server's order, call the
model (the service, a stream, a consumer set, a feature module), build the reply.
"""
