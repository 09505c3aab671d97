"""The proxy's same-dialect path: an upstream stream relayed without turning its frames
into events and back (``relay``). The agent runner asks :func:`~.relay.relay_for` once
per streamed run; everything else about a run (the task registry, cancellation,
resubscription, the task store, tracing) is the same on both paths."""
