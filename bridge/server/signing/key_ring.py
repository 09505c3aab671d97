"""The keys one purpose signs with (the agent card, push-notification JWTs), rotated
while the server runs.

A :class:`KeyRing` hands out its current key and publishes (in the JWKS) every key a
receiver may still need: the current one, the next one, and each retired key while
what it signed may still be checked (``keep_for`` after it stopped signing: for push
tokens, their lifetime plus leeway; for cards, which do not expire, see
``a2a/card_signing.py``). A new key is published before it signs (``publish_ahead``
seconds), so a receiver that cached the JWKS, or may refetch it only after a cool-down
(PyJWT's ``PyJWKClient``: 30 s), finds it.
Two sources:

- a PEM file (``path``): read at start and whenever it changes (checked at most every
  ``check_every`` seconds, when a key is asked for). Replacing the file rotates the key
  on every replica that reads it, without a restart: the new key is published at once
  and signs ``publish_ahead`` seconds later. A file that cannot be read or holds no
  usable key keeps the current key and says so in the log, once per change.
- generated keys: a fresh EC P-256 key every ``rotate_every`` seconds. The next key is
  made one period ahead and published at once, so a receiver that caches the JWKS
  already holds it when it starts signing. Each replica has its own keys: replicas
  behind one JWKS URL need the shared file instead.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

from trpc_bridge.server.signing.keys import SigningKey, SigningKeyError, load_signing_key

logger = logging.getLogger(__name__)

DAY = 86_400.0
#: Seconds a new key from the file is published before it signs: the JWKS's max-age,
#: and more than PyJWKClient's 30 s refetch cool-down.
PUBLISH_AHEAD = 60.0


class KeyRing:
    def __init__(
        self,
        *,
        name: str = "signing",
        path: str | Path = "",
        rotate_every: float = DAY,
        keep_for: float = 0.0,
        check_every: float = 1.0,
        publish_ahead: float = PUBLISH_AHEAD,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``name``: what the keys sign, for the log (``card``, ``push``). ``keep_for``:
        how long a retired key stays published after its last signature (for tokens:
        their longest lifetime plus the receivers' clock leeway). Raises
        :class:`~trpc_bridge.server.signing.keys.SigningKeyError` for an unusable file."""
        self._path = Path(path) if path else None
        self._rotate_every = rotate_every
        self._keep_for = keep_for
        #: Seconds between looks at the key file (0: every time a key is asked for).
        self.check_every = check_every
        #: Seconds a new key from the file is published before it signs.
        self.publish_ahead = publish_ahead
        #: Where the ring reads the time (a seam: tests move it).
        self.clock = clock
        self._name = name
        #: Retired keys and when they leave the JWKS.
        self._retired: list[tuple[SigningKey, float]] = []
        self._next: SigningKey | None = None
        #: When the file's new key (``_next``) starts signing.
        self._activate_at = 0.0
        self._checked = clock()
        if self._path is not None:
            self._stat = self._file_state()
            self._current = load_signing_key(self._path)
        else:
            self._current = SigningKey.generate()
            self._next = SigningKey.generate()
        self._since = self._checked

    def _file_state(self) -> tuple[int, int, int] | None:
        assert self._path is not None
        try:
            st = os.stat(self._path)
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def _retire(self, replacement: SigningKey) -> None:
        if replacement.kid == self._current.kid:
            return
        now = self.clock()
        self._retired.append((self._current, now + self._keep_for))
        self._current, self._since = replacement, now
        logger.info("%s key rotated: now %s", self._name, replacement.kid)

    def _refresh(self) -> None:
        now = self.clock()
        self._retired = [(key, until) for key, until in self._retired if until > now]
        if self._path is None:
            if self._rotate_every > 0 and now - self._since >= self._rotate_every:
                assert self._next is not None
                self._retire(self._next)
                self._next = SigningKey.generate()
            return
        if now - self._checked >= self.check_every:
            self._checked = now
            self._look_at_file()
        if self._next is not None and now >= self._activate_at:
            self._retire(self._next)
            self._next = None

    def _look_at_file(self) -> None:
        state = self._file_state()
        if state == self._stat:
            return
        self._stat = state
        try:
            key = load_signing_key(self._path or "")
        except SigningKeyError as exc:
            logger.warning(
                "%s key file changed but is not usable, kept %s: %s",
                self._name,
                self._current.kid,
                exc,
            )
            return
        if key.kid == self._current.kid:
            self._next = None  # the file is back to the key that signs: nothing to rotate
        elif self._next is None or key.kid != self._next.kid:
            self._next, self._activate_at = key, self.clock() + self.publish_ahead
            logger.info(
                "%s key %s published; it signs in %g s", self._name, key.kid, self.publish_ahead
            )

    def current(self) -> SigningKey:
        """The key to sign with now (rotated first when due)."""
        self._refresh()
        return self._current

    def published(self) -> list[SigningKey]:
        """Every key a receiver may need: current, next (generated keys), retired ones
        whose tokens may still be valid."""
        self._refresh()
        keys = [self._current]
        if self._next is not None:
            keys.append(self._next)
        keys.extend(key for key, _ in self._retired)
        return keys
