"""The ``trpc-bridge`` command line: one module per command (``serve``, ``call``,
``proxy``, ``acp``, ``api-key``), each a thin shell over the library — argument parsing
and printing there, behaviour in the modules it calls."""

from trpc_bridge.cli import acp, api_key, call, proxy, serve
from trpc_bridge.cli.app import app, main

__all__ = ["acp", "api_key", "app", "call", "main", "proxy", "serve"]
