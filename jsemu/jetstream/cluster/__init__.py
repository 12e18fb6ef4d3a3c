"""The simulated cluster: a stream's peers (``replicas.py``: each its own store, the leader's
logging the records the followers apply), a consumer's peers and raft group
(``consumer_peers.py``) and replicated state (``consumer_replication.py``), the leader-elected
(``leader.py``) and quorum-lost (``quorum.py``) advisories. It sits below ``streams`` and
``consumers`` and sees them through the protocols of ``members.py``.
"""
