"""Typed errors of the E2A codec. Every bad input raises one of these, never anything else.

They are :class:`~trpc_bridge.codecs.errors.CodecError` (a ``ValueError``), so a door
that already turns codec errors into a precise answer to its caller handles them too.
"""

from __future__ import annotations

from pydantic import ValidationError

from trpc_bridge.codecs.errors import CodecError


class E2AError(CodecError):
    """Input the E2A codec cannot accept; the message says what and where."""


class E2AVersionError(E2AError):
    """A ``protocol_version`` of another major version than ours."""


class E2AFormatError(E2AError):
    """A record that is not an E2A envelope / response: a missing id, a field of the wrong
    type, a body that does not fit its ``response_kind``, a malformed ACP or A2A payload."""


class E2ARuleError(E2AError):
    """A record that breaks a rule of docs/specs/e2a.md §12: ``failed`` without an error
    kind, a sequence that does not go 0, 1, 2, … per request, a second ``is_final``."""


def format_error(what: str, error: ValidationError) -> E2AFormatError:
    """A one-line message for a pydantic error: each bad field with its location.

    Input values are left out on purpose: they may hold a bearer token.
    """
    problems = []
    for item in error.errors(include_url=False, include_input=False)[:5]:
        where = ".".join(str(p) for p in item["loc"]) or "(root)"
        problems.append(f"{where}: {item['msg']}")
    more = error.error_count() - len(problems)
    suffix = f" (+{more} more)" if more > 0 else ""
    return E2AFormatError(f"invalid {what}: {'; '.join(problems)}{suffix}")
