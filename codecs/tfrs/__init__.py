"""The tfrs structured progress envelope (``docs/specs/tfrs-progress.md``): progress blocks in A2A
``working`` status updates, beside (never instead of) the answer the terminal state carries.

- :mod:`.envelope` — the v1 model, its JSON-string form, the tolerant reader;
- :mod:`.limits` — the 8 KB soft / 64 KB hard size rules, cutting at line ends;
- :mod:`.producer` — agent events → progress updates (one turn's ``seq``, open tools);
- :mod:`.merge` — one turn's blocks deduplicated by ``(streamKey, seq)``, order-free;
- :mod:`.consumer` — A2A results (stream, resubscribe, ``tasks/get`` history) → items;
- :mod:`.to_events` — a peer's progress → reasoning and tool agent events;
- :mod:`.overlay` — progress beside any stream encoding (the server side).
"""

from trpc_bridge.codecs.tfrs.consumer import (
    PROGRESS_FRAMES,
    ProgressConsumer,
    content_only,
    frame_items,
    message_item,
)
from trpc_bridge.codecs.tfrs.envelope import (
    EXTENSION_URI,
    METADATA_KEY,
    NO_ENVELOPE,
    REQUEST_METADATA_KEY,
    VERSION,
    Envelope,
    parse_envelope,
    pseudo_envelope,
    read_envelope,
)
from trpc_bridge.codecs.tfrs.limits import HARD_LIMIT, SOFT_LIMIT, split_text
from trpc_bridge.codecs.tfrs.merge import ProgressItem, ProgressMerger, StreamView
from trpc_bridge.codecs.tfrs.producer import (
    ProgressProducer,
    ProgressUpdate,
    working_update,
)
from trpc_bridge.codecs.tfrs.to_events import ProgressEvents

__all__ = [
    "EXTENSION_URI",
    "HARD_LIMIT",
    "METADATA_KEY",
    "NO_ENVELOPE",
    "PROGRESS_FRAMES",
    "REQUEST_METADATA_KEY",
    "SOFT_LIMIT",
    "VERSION",
    "Envelope",
    "ProgressConsumer",
    "ProgressEvents",
    "ProgressItem",
    "ProgressMerger",
    "ProgressProducer",
    "ProgressUpdate",
    "StreamView",
    "content_only",
    "frame_items",
    "message_item",
    "parse_envelope",
    "pseudo_envelope",
    "read_envelope",
    "split_text",
    "working_update",
]
