import gc

# No collection while a server process starts: the imports and the stores read back create
# hundreds of thousands of objects and no garbage. ``jsemu.cli.serve.tune_gc`` turns the
# collector back on once the server is up; every other command turns it on in ``main``.
gc.disable()

from .cli import main  # after the collector is off

raise SystemExit(main())
