"""Agents that ship with the bridge: the demo agent and the interop scenarios' Python twins."""
