"""Which hosts are this machine: the one loopback rule for binds, peers, issuers and token
endpoints, on the server and the client side alike."""

from __future__ import annotations

import ipaddress


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a bind or peer address, or a URL's host) is this machine only; an
    IPv4 address mapped into IPv6 (``::ffff:127.0.0.1``, a dual-stack socket's peer)
    counts as itself."""
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return bool((mapped or address).is_loopback)
