"""The installed distribution's version, for cards, meters and ``--version``; ``0.0.0`` in a
bare checkout that was never installed."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("trpc-a2a-bridge")
except PackageNotFoundError:  # pragma: no cover - a bare checkout, not installed
    __version__ = "0.0.0"
