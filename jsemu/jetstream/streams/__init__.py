"""Streams: ``Stream`` (``stream.py``: its store and peers, the publish path of
``processJetStreamMsg``), its config (``config.py``) and the features that run on the publish
path: ``retention.py`` (interest and work queue), ``republish.py``, ``counters.py``,
``delete_markers.py``, ``schedules.py`` and ``schedule_pattern.py``, ``atomic_batch.py``,
``refusals.py`` (settings accepted by nats-server and not implemented). It uses ``links``,
``cluster``, ``directget``, ``limits`` and ``events``; what it needs of the service and of its
consumers, it declares in ``host.py`` and ``retention.py``.
"""
