"""An account's JetStream limits: the counts (``counts.py``: streams, consumers per stream,
``max_ack_pending``) and the storage bytes, the account's and the server's (``storage.py``).
Below ``streams``: the streams it counts are seen through the protocols of ``storage.py``.
"""
