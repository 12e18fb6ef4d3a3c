"""Mirrors and sources: a stream's internal consumers of other streams (``upstream.py``, the
machinery both share; ``mirror.py``; ``sources.py``) and the route to an upstream in another
account through its imports (``external_route.py``). Below ``streams``: a linked stream is
seen through the protocols of ``upstream.py``.
"""
