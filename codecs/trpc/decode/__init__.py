"""A2A results → :class:`~trpc_bridge.events.AgentEvent`: what trpc-agent-go's ``A2AAgent``
reads, plus what it loses (``docs/specs/trpc-interaction.md`` §4).

Two entry points:

- :func:`decode_result` — a unary ``message/send`` / ``SendMessage`` result (a Message or
  a Task), decoded as trpc's ``ConvertToEvents`` does (§4.4, vector C11).
- :class:`StreamDecoder` — one object per stream; :meth:`StreamDecoder.feed` turns each
  streamed result into zero or more events (§4.2–§4.4).

Both shapes of the wire are read (see :mod:`trpc_bridge.codecs.a2a.frames`). Where the Go
v0 client loses information, this decoder keeps it; each place says so with "Go v0:".
The one rule consumers need: a non-partial event carries the *complete* ``message`` of
its response id, and deltas seen before it under that id are its pieces — never add both.

Modules: :mod:`.parts` (parts → content), :mod:`.units` (metadata, units, event
construction), :mod:`.unary`, :mod:`.stream`.
"""

from trpc_bridge.codecs.trpc.decode.parts import DataPartMapper
from trpc_bridge.codecs.trpc.decode.stream import StreamDecoder, decode_stream
from trpc_bridge.codecs.trpc.decode.unary import decode_result

__all__ = ["DataPartMapper", "StreamDecoder", "decode_result", "decode_stream"]
