"""Generated from ``protos/trpc_bridge/v1/agent.proto`` by ``make protos``; do not edit the
``agent_pb2*`` files (``make lint`` fails when they are stale). The proto package
``trpc_bridge.v1`` is this import package, so the generated imports resolve as they are.
Conversions to and from the event model: :mod:`trpc_bridge.codecs.agent_proto`."""
