"""nats-server's configuration, read into ``ServerOptions``: the file format (``parser.py``:
maps, arrays, ``include``, each key's ``FILE:LINE:COL``), the keys applied and refused
(``server_config.py``, with ``tls.py`` and ``js_limits.py`` for their blocks), and start-up
failures as one line in nats-server's words (``startup_errors.py``). It sits above ``server``
(whose options it fills) and below the command line (``jsemu/cli/``).
"""
