"""A pytest plugin loaded into the TCK's own run (``-p tck_credentials``) against a bridge
that requires credentials (``tck_run.py --target tck-auth``): every request the TCK
makes carries the credential named by ``TCK_CREDENTIAL`` (``Header-Name: value``), on
HTTP (any httpx client) and on gRPC (any channel), as a real A2A client would after
reading the card's ``securitySchemes``. The TCK itself knows nothing of credentials.

It runs inside the TCK's virtualenv, so it imports only what the TCK has (pytest, httpx,
grpcio).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import grpc
import httpx

_NAME, _, _VALUE = os.environ.get("TCK_CREDENTIAL", "").partition(":")
_NAME, _VALUE = _NAME.strip(), _VALUE.strip()


class _WithCredential(
    grpc.UnaryUnaryClientInterceptor,  # type: ignore[misc]
    grpc.UnaryStreamClientInterceptor,  # type: ignore[misc]
):
    def _details(self, details: Any) -> Any:
        metadata = list(details.metadata or ())
        if all(key != _NAME.lower() for key, _ in metadata):
            metadata.append((_NAME.lower(), _VALUE))
        return details._replace(metadata=metadata)

    def intercept_unary_unary(
        self, continuation: Callable[..., Any], details: Any, request: Any
    ) -> Any:
        return continuation(self._details(details), request)

    def intercept_unary_stream(
        self, continuation: Callable[..., Any], details: Any, request: Any
    ) -> Any:
        return continuation(self._details(details), request)


def _install() -> None:
    send = httpx.Client.send

    def send_with_credential(self: httpx.Client, request: httpx.Request, **kwargs: Any) -> Any:
        if _NAME not in request.headers:
            request.headers[_NAME] = _VALUE
        return send(self, request, **kwargs)

    httpx.Client.send = send_with_credential  # type: ignore[method-assign]
    insecure_channel = grpc.insecure_channel

    def channel_with_credential(target: str, *args: Any, **kwargs: Any) -> grpc.Channel:
        return grpc.intercept_channel(insecure_channel(target, *args, **kwargs), _WithCredential())

    grpc.insecure_channel = channel_with_credential


if _NAME:
    _install()
