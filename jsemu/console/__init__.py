"""The dev console on the monitoring port (``/console``): the server, its streams, messages,
consumers, buckets and the control plane, in a browser. See ``site.py``."""

from .site import Console

__all__ = ["Console"]
