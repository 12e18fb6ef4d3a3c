"""What outlives a restart: file streams' logs and configs (``stream_files.py``), consumers'
state (``consumer_store.py``), the duplicate window rebuilt (``dedup_rebuild.py``), snapshot
archives and their transfers (``snapshot_archive.py``, ``snapshot_transfer.py``). Above
``streams`` and ``consumers``; what it needs of the service is declared in ``host.py``.
"""
