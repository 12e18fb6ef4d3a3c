"""The ``jsemu`` command line (being split into modules)."""

from .parser import add_server_flags, build_parser, main, parse_stand_in, serve_options, stand_in_options

__all__ = ["add_server_flags", "build_parser", "main", "parse_stand_in", "serve_options", "stand_in_options"]
