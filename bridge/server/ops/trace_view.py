"""The playground's trace view over HTTP: the spans of one trace from the span buffer, and
an OTLP/HTTP receiver that lets another process put its spans there.

- ``GET <base>/playground/traces/<trace id>``: ``{"spans": [...]}`` (times relative to the
  trace's first span; empty while nothing of that trace has arrived); HTTP 404 when this
  server keeps no spans (the trace view is off), so the page draws nothing.
- ``POST <base>/v1/traces``: an OTLP/HTTP protobuf export (``ExportTraceServiceRequest``),
  as any OTLP exporter sends it to ``OTEL_EXPORTER_OTLP_ENDPOINT=<the bridge's URL>``;
  answered with an empty ``ExportTraceServiceResponse``. A body that is not one gets
  HTTP 400, another media type 415. Only with the span buffer on, and only from a
  loopback peer (no credentials asked: the HTTP edge lets it through) or an
  authenticated caller (:func:`may_send_spans`; 403 otherwise).

The trace route itself asks for the server's credentials like every other route: the
spans of a run say what it did.

The buffer is bounded (:mod:`~trpc_bridge.telemetry.span_buffer`), so a flood of exports
costs memory up to its size and no more.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from trpc_bridge.names import ANONYMOUS
from trpc_bridge.server.auth.http_edge import peer_is_loopback
from trpc_bridge.server.auth.principal import Principal, Scheme
from trpc_bridge.telemetry.span_buffer import OtlpError, SpanBuffer, trace_json

#: The OTLP/HTTP traces path (appended to an exporter's base endpoint).
OTLP_TRACES_PATH = "/v1/traces"
_PROTOBUF = "application/x-protobuf"


def may_send_spans(request: Request) -> bool:
    """A loopback peer, or a caller the edge verified: any scheme's principal but the
    trusted header's anonymous one (``--trust-user-header`` without ``X-User-ID``: no
    authenticating proxy vouched for it)."""
    if peer_is_loopback(request.scope):
        return True
    principal = request.scope.get("auth")
    if not isinstance(principal, Principal):
        return False
    return not (principal.scheme == Scheme.HEADER and principal.user_id == ANONYMOUS)


def trace_view_routes(buffer: SpanBuffer | None, base_path: str = "") -> list[BaseRoute]:
    """The trace route (404 without a buffer) and, with one, the OTLP receiver."""
    base = base_path.rstrip("/")

    async def spans(request: Request) -> Response:
        if buffer is None:
            return JSONResponse({"error": "this server keeps no spans"}, status_code=404)
        found = buffer.spans(request.path_params["trace_id"])
        return JSONResponse(trace_json(found), headers={"Cache-Control": "no-store"})

    routes: list[BaseRoute] = [
        Route(f"{base}/playground/traces/{{trace_id}}", spans, methods=["GET"])
    ]
    if buffer is None:
        return routes

    async def receive(request: Request) -> Response:
        if not may_send_spans(request):
            return JSONResponse(
                {"error": "spans are taken from this machine or from an authenticated caller"},
                status_code=403,
            )
        media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if media != _PROTOBUF:
            return JSONResponse(
                {"error": f"send OTLP/HTTP protobuf ({_PROTOBUF})"}, status_code=415
            )
        if request.headers.get("content-encoding", "identity").lower() != "identity":
            return JSONResponse({"error": "send the export uncompressed"}, status_code=415)
        try:
            buffer.add_otlp(await request.body())
        except OtlpError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        return Response(b"", media_type=_PROTOBUF)  # an empty ExportTraceServiceResponse

    routes.append(Route(f"{base}{OTLP_TRACES_PATH}", receive, methods=["POST"]))
    return routes
