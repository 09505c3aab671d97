"""What the bridge signs with (``--card-signing-key``, ``--push-signing-key``,
``--push-key-rotation``)."""

from __future__ import annotations

from dataclasses import dataclass

from trpc_bridge.server.signing.key_ring import DAY


@dataclass(frozen=True)
class SigningOptions:
    #: PEM private key file that signs the agent card; empty = the card is not signed.
    card_key: str = ""
    #: PEM private key file that signs push notifications, re-read when it changes
    #: (replicas share it); empty = keys generated in memory.
    push_key: str = ""
    #: Generated push keys: seconds between rotations (0 = never rotate).
    push_key_rotation: float = DAY
