"""Consumers: the delivery engine of pull and push consumers (``consumer.py``, its fast loops
in ``fast.py`` and the state they share in ``delivery.py``), their config (``config.py``), pull
requests (``pull_request.py``), where a new one starts (``start_position.py``), acks
(``ack_kinds.py``), a stream's consumers and their lifetimes (``consumer_set.py``), and the
features on them: ``pause.py``, ``priority_groups.py``, ``rate_limit.py``, staged ``faults.py``.
It sits above ``streams`` (a consumer reads its stream's store); what it needs of the service
is declared in ``host.py``.
"""
