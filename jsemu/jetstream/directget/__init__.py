"""Direct Get (ADR-31): the responders of ``$JS.API.DIRECT.GET``."""
