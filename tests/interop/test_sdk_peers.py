"""What the A2A SDK peers of other languages (interop/java, interop/js) found in the
bridge that the frameworks matrix cannot show in a cell."""

from __future__ import annotations

from frameworks import PeerClient
from views import a2a_view


def test_java_sdk_default_http_client_calls_the_bridge(
    framework_clients: dict[str, PeerClient], bridges: dict[tuple[str, str], str]
) -> None:
    """The JDK's HTTP client (the A2A Java SDK's default) offers ``Upgrade: h2c`` on every
    plain-HTTP request; the bridge ignores the offer and reads the body in HTTP/1.1."""
    url = bridges[("serve", "text")]
    answer = framework_clients["java"].call(url, stream=False, h2c=True)
    assert a2a_view(answer["events"], unary=True).texts == ("Hello from trpc.",)
