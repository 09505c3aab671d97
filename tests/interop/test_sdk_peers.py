"""What the A2A SDK peers of other languages (interop/java, interop/js) found in the
bridge that the frameworks matrix cannot show in a cell."""

from __future__ import annotations

import pytest
from framework_fixtures import bridge_key
from frameworks import JAVA, PeerClient
from views import a2a_view


@pytest.mark.xfail(
    strict=True,
    reason=(
        "the bridge's HTTP server (uvicorn's httptools protocol) reads a request that "
        "offers `Upgrade: h2c` as ending at its head: the body is taken for the upgraded "
        "protocol and dropped, and the bridge answers -32700 Parse error. The A2A Java "
        "SDK's default HTTP client (the JDK's, on HTTP/2) offers h2c on every plain-HTTP "
        "request, so it cannot call the bridge at all; the matrix's Java cells use HTTP/1.1"
    ),
)
def test_java_sdk_default_http_client_calls_the_bridge(
    framework_clients: dict[str, PeerClient], bridges: dict[tuple[str, ...], str]
) -> None:
    url = bridges[bridge_key(JAVA, "serve", "text")]
    answer = framework_clients["java"].call(url, stream=False, h2c=True)
    assert a2a_view(answer["events"]).texts == ("Hello from trpc.",)
