"""Direct Get (ADR-31): ``responder.py``'s ``DirectGetResponder``, a stream's (or a peer's, a
mirror's) answers to ``$JS.API.DIRECT.GET.<stream>[.<subject>]`` in the ``_sys_`` queue group.
Below ``streams``: the stream it answers for is seen through the protocols it declares.
"""
