"""Properties of the trpc decode codec: on any JSON it either decodes or raises
:class:`CodecError`, never anything else."""

from __future__ import annotations

import contextlib
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from trpc_bridge.codecs.trpc_decode import StreamDecoder, decode_result
from trpc_bridge.codecs.trpc_keys import CodecError

_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
json_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


def _either(value: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A plausible value, or any JSON at all in its place."""
    return value | json_values


_metadata = st.dictionaries(
    st.sampled_from(
        [
            "type",
            "adk_type",
            "thought",
            "adk_thought",
            "object_type",
            "llm_response_id",
            "tag",
            "state_delta",
            "task_state",
            "error_type",
            "error_message",
            "error_code",
            "content_type",
            "data_part_compat",
        ]
    ),
    _either(
        st.sampled_from(
            [
                "function_call",
                "function_response",
                "executable_code",
                "code_execution_result",
                "chat.completion",
                "chat.completion.chunk",
                "error",
                "failed",
                "image",
            ]
        )
        | st.booleans()
    ),
    max_size=4,
)
_data = _either(
    st.fixed_dictionaries(
        {},
        optional={
            "id": _either(st.text(max_size=4)),
            "name": _either(st.text(max_size=4)),
            "args": json_values,
            "response": json_values,
            "code": json_values,
            "output": json_values,
            "value": json_values,
        },
    )
)
_part = _either(
    st.fixed_dictionaries(
        {},
        optional={
            "kind": _either(st.sampled_from(["text", "data", "file", "video"])),
            "text": _either(st.text(max_size=6)),
            "data": _data,
            "file": _either(
                st.fixed_dictionaries({}, optional={"bytes": json_values, "uri": json_values})
            ),
            "raw": json_values,
            "url": json_values,
            "metadata": _either(_metadata),
        },
    )
)
_parts = _either(st.lists(_part, max_size=4))
_message = st.fixed_dictionaries(
    {"kind": st.just("message")},
    optional={
        "messageId": json_values,
        "role": json_values,
        "parts": _parts,
        "metadata": _either(_metadata),
    },
)
_status = st.fixed_dictionaries(
    {"state": _either(st.sampled_from(["working", "failed", "TASK_STATE_CANCELED", "completed"]))},
    optional={"message": _either(_message)},
)
_results = st.one_of(
    json_values,
    _message,
    st.fixed_dictionaries(
        {"kind": st.just("status-update"), "status": _either(_status)},
        optional={"metadata": _either(_metadata), "taskId": json_values},
    ),
    st.fixed_dictionaries(
        {"kind": st.just("artifact-update")},
        optional={
            "artifact": _either(
                st.fixed_dictionaries({"artifactId": json_values, "parts": _parts})
            ),
            "metadata": _either(_metadata),
            "lastChunk": json_values,
        },
    ),
    st.fixed_dictionaries(
        {"kind": st.just("task"), "status": _either(_status)},
        optional={
            "id": json_values,
            "history": _either(st.lists(_message, max_size=3)),
            "artifacts": _either(
                st.lists(
                    st.fixed_dictionaries({"artifactId": json_values, "parts": _parts}), max_size=3
                )
            ),
            "metadata": _either(_metadata),
        },
    ),
).flatmap(
    # …and each of them also in a 1.0 wrapper.
    lambda r: st.sampled_from([r, {"statusUpdate": r}, {"artifactUpdate": r}, {"task": r}])
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_results, min_size=1, max_size=5))
def test_stream_decoding_raises_nothing_but_codec_error(results: list[Any]) -> None:
    decoder = StreamDecoder()
    for result in results:
        with contextlib.suppress(CodecError):
            decoder.feed(result)


@settings(max_examples=400, deadline=None)
@given(_results)
def test_unary_decoding_raises_nothing_but_codec_error(result: Any) -> None:
    try:
        events = decode_result(result)
    except CodecError:
        return
    assert not events or events[-1].done
