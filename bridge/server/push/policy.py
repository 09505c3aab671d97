"""Where push notifications may go: the webhook URL screen (no SSRF).

A push config names a URL the server will POST to later, on behalf of whoever created
it: without a screen, any caller could make the bridge call its own network (metadata
services, admin ports, databases on loopback). The rules:

- ``http`` or ``https`` only, with a host and a valid port, at most
  :data:`MAX_URL_LENGTH` characters;
- when an allow-list is configured (``--push-allow-host``, ``fnmatch`` patterns such as
  ``*.example.com``), the host must match one;
- every address the host stands for must be public: loopback, private, link-local,
  shared, reserved, unspecified and multicast addresses are refused, except loopback when
  it was allowed (``--push-allow-loopback``, for tests and same-host receivers).

An address is judged in every spelling that reaches it: ``127.0.0.1`` and ``[::1]``, but
also the forms the C resolver reads as IPv4 (``127.1``, ``2130706433``, ``0x7f000001``,
``0177.0.0.1``, ``0``), IPv4-mapped IPv6 (``[::ffff:127.0.0.1]``), ``localhost`` and its
subdomains (RFC 6761), and any name, which is resolved. The whole screen runs when a
config is created — a caller learns at once that its URL will never be called — and
again before each delivery, so a name that later resolves inward is refused too. A name
that does not resolve yet is accepted at creation (nothing can be said of it) and
refused at delivery while it still does not. A name
that resolves differently between the check and the connection (DNS rebinding within the
TTL) is not covered: put the bridge behind an egress proxy where that matters.
"""

from __future__ import annotations

import asyncio
import fnmatch
import ipaddress
import re
import socket
from urllib.parse import urlsplit

from trpc_bridge.names import shown_id
from trpc_bridge.server.options import PushPolicy

#: Longest webhook URL accepted (browsers and proxies commonly stop near here).
MAX_URL_LENGTH = 2048
_IPV4_SPELLING = re.compile(r"[0-9a-fx.]+")

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def _literal(host: str) -> Address | None:
    """The address ``host`` spells, if it spells one (see the module doc); IPv4-mapped
    IPv6 as the IPv4 address it carries."""
    try:
        address: Address = ipaddress.ip_address(host)
    except ValueError:
        if not _IPV4_SPELLING.fullmatch(host):
            return None
        try:  # inet_aton reads what getaddrinfo would: 127.1, 0x7f000001, 0177.0.0.1, …
            address = ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    mapped = getattr(address, "ipv4_mapped", None)
    return mapped if mapped is not None else address


def _localhost(host: str) -> bool:
    return host == "localhost" or host.endswith(".localhost")


def _public(address: Address) -> bool:
    return address.is_global and not (
        address.is_multicast or address.is_reserved or address.is_unspecified
    )


class WebhookScreen:
    """The screen of one server's :class:`~trpc_bridge.server.options.PushPolicy`."""

    def __init__(self, policy: PushPolicy) -> None:
        self.allow_hosts = policy.allow_hosts
        self.allow_loopback = policy.allow_loopback

    def refusal(self, url: str) -> str | None:
        """Why ``url`` cannot be a webhook, judged without DNS, or ``None`` (a name is
        then judged by :meth:`screen`)."""
        if len(url) > MAX_URL_LENGTH:
            return f"push notification url is longer than {MAX_URL_LENGTH} characters"
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError:
            return "push notification url is not a URL with a valid port (1-65535)"
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return "push notification url must be an http(s) URL with a host"
        if port == 0:
            return "push notification url is not a URL with a valid port (1-65535)"
        host = parts.hostname.lower().rstrip(".")
        if self.allow_hosts and not any(fnmatch.fnmatch(host, p) for p in self.allow_hosts):
            return f"push notification host {shown_id(host)!r} is not on this server's allow-list"
        if _localhost(host):
            return self._address_refusal(host, ipaddress.IPv4Address("127.0.0.1"))
        address = _literal(host)
        return None if address is None else self._address_refusal(host, address)

    def _address_refusal(self, host: str, address: Address) -> str | None:
        if address.is_loopback and self.allow_loopback:
            return None
        if not _public(address):
            return f"push notification host {shown_id(host)!r} is not a public address"
        return None

    async def screen(self, url: str, *, must_resolve: bool = True) -> str | None:
        """Why ``url`` cannot be a webhook now (:meth:`refusal`, then where its host
        resolves: every address must pass), or ``None``. A host that does not resolve is
        refused unless not ``must_resolve`` (a config being created)."""
        reason = self.refusal(url)
        if reason is not None:
            return reason
        host = (urlsplit(url).hostname or "").lower().rstrip(".")
        if _localhost(host) or _literal(host) is not None:
            return None  # judged above
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                host, None, type=socket.SOCK_STREAM
            )
        except (OSError, UnicodeError):
            if not must_resolve:
                return None
            return f"push notification host {shown_id(host)!r} does not resolve"
        for info in infos:
            address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
            mapped = getattr(address, "ipv4_mapped", None)
            refused = self._address_refusal(host, mapped if mapped is not None else address)
            if refused is not None:
                return f"{refused} (it resolves to {address})"
        return None
