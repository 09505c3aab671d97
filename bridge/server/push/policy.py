"""Where push notifications may go: the webhook URL screen (no SSRF).

A push config names a URL the server will POST to later, on behalf of whoever created
it: without a screen, any caller could make the bridge call its own network (metadata
services, admin ports, databases on loopback). The rules:

- ``http`` or ``https`` only, with a host;
- when an allow-list is configured (``--push-allow-host``, ``fnmatch`` patterns such as
  ``*.example.com``), the host must match one;
- at delivery time the host is resolved and every address must be public: loopback,
  private, link-local, shared, reserved and multicast addresses are refused
  (a2a-sdk's ``validate_push_notification_url``), except loopback when it was allowed
  (``--push-allow-loopback``, for tests and same-host receivers).

A config is screened when it is created (scheme, host, allow-list, literal addresses)
and again before each delivery (DNS), so a name that later resolves inward is refused
too. A name that resolves differently between the check and the connection (DNS
rebinding within the TTL) is not covered: put the bridge behind an egress proxy where
that matters.
"""

from __future__ import annotations

import asyncio
import fnmatch
import ipaddress
import logging
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from a2a.utils.push_url_validator import validate_push_notification_url

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PushPolicy:
    #: Host patterns a webhook may use; empty = any public host.
    allow_hosts: tuple[str, ...] = ()
    #: Webhooks on loopback (127.0.0.0/8, ::1, localhost) are allowed.
    allow_loopback: bool = False

    def refusal(self, url: str) -> str | None:
        """Why ``url`` cannot be a webhook (checked without DNS), or ``None``."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return "push notification url must be an http(s) URL with a host"
        host = parts.hostname.lower()
        if self.allow_hosts and not any(fnmatch.fnmatch(host, p) for p in self.allow_hosts):
            return f"push notification host {host!r} is not on this server's allow-list"
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return None
        if address.is_loopback and self.allow_loopback:
            return None
        if not address.is_global:
            return f"push notification host {host!r} is not a public address"
        return None

    async def allows(self, url: str) -> bool:
        """The delivery-time check: the screen above plus where the host resolves now."""
        reason = self.refusal(url)
        if reason is not None:
            logger.warning("push delivery refused: %s", reason)
            return False
        if self.allow_loopback and await _resolves_to_loopback(urlsplit(url).hostname or ""):
            return True
        if not await validate_push_notification_url(url):
            logger.warning("push delivery refused: %s resolves to a non-public address", url)
            return False
        return True


async def _resolves_to_loopback(host: str) -> bool:
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError:
        return False
    addresses = {info[4][0] for info in infos}
    return bool(addresses) and all(ipaddress.ip_address(a).is_loopback for a in addresses)
