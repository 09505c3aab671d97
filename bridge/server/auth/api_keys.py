"""``--auth api-key --api-keys FILE``: static API keys, stored hashed, each naming a user.

The file holds one key per line, ``<user-id> sha256:<hex digest of the key>``; blank
lines and ``#`` comments are skipped. Keys are random secrets (``trpc-bridge api-key``
makes one), so a plain SHA-256 is enough to keep a stolen file from revealing them, and
looking the digest up in a dict leaks nothing an attacker could steer. The key comes in
``X-API-Key`` (what the card declares) or, for clients that only send bearer tokens, as
``Authorization: Bearer <key>``; both at once is a client error.

The file is checked on every request (one ``stat``) and read again when it changed, so
adding or removing a key needs no restart. A file that no longer parses keeps the keys
read last, and says so once in the log.
"""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
from pathlib import Path

from trpc_bridge.server.auth.authenticator import REALM, bearer_token, checked_user_id
from trpc_bridge.server.auth.errors import CredentialMisuse, Unauthenticated
from trpc_bridge.server.auth.presented import API_KEY_HEADER, AUTHORIZATION, Presented
from trpc_bridge.server.auth.principal import Principal, Scheme

logger = logging.getLogger(__name__)

_PREFIX = "sha256:"


class ApiKeyFileError(ValueError):
    """The key file cannot be used; the message names the file and line."""


def key_digest(key: str) -> str:
    """How a key is written in the file: ``sha256:<hex>``."""
    return _PREFIX + hashlib.sha256(key.encode()).hexdigest()


def new_key() -> str:
    """A fresh random key (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def parse_key_file(text: str, path: str) -> dict[str, str]:
    """Digest (hex) → user id; raises :class:`ApiKeyFileError`."""
    keys: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        if len(fields) != 2 or not fields[1].startswith(_PREFIX):
            raise ApiKeyFileError(f"{path}:{number}: expected '<user-id> sha256:<hex>'")
        digest = fields[1][len(_PREFIX) :].lower()
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise ApiKeyFileError(f"{path}:{number}: the digest is not 64 hex digits")
        if digest in keys:
            raise ApiKeyFileError(f"{path}:{number}: the same key is listed twice")
        keys[digest] = checked_user_id(fields[0], "key file line")
    return keys


class ApiKeyFile:
    scheme = Scheme.API_KEY

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._stamp: tuple[int, int, int] | None = None
        self._keys: dict[str, str] = {}
        self._load()  # an unusable file at start is the operator's error: raise it

    def _load(self) -> None:
        try:
            stat = self.path.stat()
        except OSError as exc:
            self._refused((0, 0, 0), exc)
            return
        stamp = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        if stamp == self._stamp:
            return
        try:
            keys = parse_key_file(self.path.read_text(encoding="utf-8"), str(self.path))
        except (OSError, UnicodeDecodeError, ApiKeyFileError) as exc:
            self._refused(stamp, exc)
            return
        self._keys, self._stamp = keys, stamp

    def _refused(self, stamp: tuple[int, int, int], exc: Exception) -> None:
        if self._stamp is None:  # at start: the operator's error, raised
            raise ApiKeyFileError(f"cannot use the API key file {self.path}: {exc}") from None
        if stamp != self._stamp:  # said once per version of the file
            logger.error(
                "API key file %s not reloaded (the keys read last stay): %s", self.path, exc
            )
            self._stamp = stamp

    async def authenticate(self, presented: Presented) -> Principal:
        key = presented.one(API_KEY_HEADER)
        if presented.one(AUTHORIZATION) is not None:
            if key is not None:
                raise CredentialMisuse("send the API key once: X-API-Key or Authorization")
            key = bearer_token(presented)
        if key is None:
            raise Unauthenticated("an API key is required (X-API-Key)", error="")
        self._load()
        user_id = self._keys.get(hashlib.sha256(key.strip().encode()).hexdigest())
        if user_id is None:
            raise Unauthenticated("the API key is not valid")
        return Principal(user_id, Scheme.API_KEY)

    def challenge(self, refusal: Unauthenticated) -> str:
        return f'APIKey realm="{REALM}", in="header", name="X-API-Key"'

    async def start(self) -> None:
        pass

    async def close(self) -> None:
        pass
