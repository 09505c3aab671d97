"""The ``trpc-bridge`` command line: one module per command (``serve``, ``call``,
``proxy``, ``acp``), each a thin shell over the library — argument parsing and printing there,
behaviour in the modules it calls."""

from trpc_bridge.cli import acp, call, proxy, serve
from trpc_bridge.cli.app import app, main

__all__ = ["acp", "app", "call", "main", "proxy", "serve"]
