"""Codecs: pure translations between the internal :class:`~trpc_bridge.events.AgentEvent`
model and wire formats. No I/O and no global state; a codec that needs memory across
events (an aggregator, a dedupe window) is an explicit object.

Modules:

- :mod:`trpc_bridge.codecs.trpc.keys` — the trpc dialect's vocabulary and shared encodings.
- :mod:`trpc_bridge.codecs.trpc.encode` — agent events → A2A parts and response metadata
  (what trpc-agent-go's server writes); :mod:`trpc_bridge.codecs.trpc.stream_frames` — the
  frames around them (``submitted``, artifact updates, the last chunk, errors).
- :mod:`trpc_bridge.codecs.trpc.decode` — A2A results in the 0.3 and 1.0 shapes → agent
  events (what trpc-agent-go's client reads, plus what it loses).
- :mod:`trpc_bridge.codecs.trpc.request` — the user's A2A message ⇄ :class:`AgentRequest`.
"""
