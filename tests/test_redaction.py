"""The redaction policy (``bridge/redaction.py``): what is masked and what is kept, text
that arrives in pieces (a key split across deltas is masked whole, and the joined
pieces equal the whole text masked), agent events (thinking and errors), JSON-like
values (secret-bearing keys), the hook (failing closed), and log records."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trpc_bridge import redaction
from trpc_bridge.events import AgentEvent
from trpc_bridge.redaction import MASK, OFF, EventRedactor, Redaction, policy_of

POLICY = Redaction()

MASKED = [
    ("my key is sk-proj-AbCdEfGhIjKlMnOp1234 ok", "my key is [redacted] ok"),
    ("sk-ant-api03-abcdefghijklmnopqrstuv", MASK),
    ("aws AKIAIOSFODNN7EXAMPLE.", "aws [redacted]."),
    ("ghp_" + "a1B2" * 9, MASK),
    ("github_pat_" + "x" * 40, MASK),
    ("glpat-" + "z" * 20, MASK),
    ("xoxb-123456789012-abcdef", MASK),
    ("AIza" + "S" * 35, MASK),
    (
        "Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlX2J5dGVz",
        "Authorization: Bearer [redacted]",
    ),
    ("authorization: bearer opaque-token-123456", "authorization: bearer [redacted]"),
    ("Basic dXNlcjpwYXNzd29yZA==", "Basic [redacted]"),
    (
        "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----\nafter",
        "[redacted]\nafter",
    ),
]

KEPT = [
    "The weather in Shanghai is 24°C.",
    "task-sk-1234567890123456789 is an id, not a key",  # no boundary before sk-
    "a basic understanding of internationalization",  # a word after "basic"
    "the bearer of bad news",
    "sk-short",
    "eyJ alone is nothing",
    "-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----",
    "",
]


@pytest.mark.parametrize(("text", "expected"), MASKED)
def test_credentials_are_masked(text: str, expected: str) -> None:
    assert POLICY.text(text) == expected


@pytest.mark.parametrize("text", KEPT)
def test_ordinary_text_is_kept(text: str) -> None:
    assert POLICY.text(text) == text


def test_values_mask_secret_keys_and_secrets_in_strings() -> None:
    value = {
        "headers": {"Authorization": "Bearer x", "X-Api-Key": "k", "Accept": "json"},
        "auth": {"bearer_token": "t", "api_key_ref": "vault://key", "password": None},
        "notes": ["see sk-proj-AbCdEfGhIjKlMnOp1234", 42, True],
    }
    assert POLICY.value(value) == {
        "headers": {"Authorization": MASK, "X-Api-Key": MASK, "Accept": "json"},
        "auth": {"bearer_token": MASK, "api_key_ref": "vault://key", "password": None},
        "notes": [f"see {MASK}", 42, True],
    }
    assert OFF.value(value) == value


def test_the_hook_masks_more_and_a_failing_hook_masks_everything() -> None:
    employee_ids = Redaction(hook=lambda text: text.replace("EMP-4711", "EMP-****"))
    assert employee_ids.text("EMP-4711 used sk-proj-AbCdEfGhIjKlMnOp1234") == (
        f"EMP-**** used {MASK}"
    )

    def broken(text: str) -> str:
        raise RuntimeError(text)

    assert Redaction(hook=broken).text("anything at all") == MASK


def test_flags_add_patterns_and_load_a_hook() -> None:
    policy = policy_of(extra_patterns=(r"ACME-\d{6}",), hook="test_redaction:upper_hook")
    assert policy.text("ticket ACME-123456, key sk-proj-AbCdEfGhIjKlMnOp1234") == (
        f"TICKET {MASK}, KEY {MASK}".replace(MASK, MASK.upper())
    )
    assert policy_of(enabled=False) is OFF
    for bad, says in ((("(unclosed",), "redaction pattern"), ((), "cannot be loaded")):
        with pytest.raises(ValueError, match=says):
            policy_of(extra_patterns=bad, hook="" if bad else "no_such_module:f")


def upper_hook(text: str) -> str:
    return text.upper()


SECRETS = st.sampled_from(
    [
        "sk-proj-AbCdEfGhIjKlMnOp1234",
        "AKIAIOSFODNN7EXAMPLE",
        "ghp_" + "a1B2" * 9,
        "Bearer opaque-token-123456",
        "-----BEGIN PRIVATE KEY-----\nMIIB\nabc\n-----END PRIVATE KEY-----",
    ]
)
WORDS = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=30)


@settings(max_examples=300, deadline=None)
@given(
    before=WORDS,
    secret=SECRETS,
    after=WORDS,
    cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=12),
)
def test_a_secret_split_across_pieces_never_leaves_and_joined_pieces_are_the_whole(
    before: str, secret: str, after: str, cuts: list[int]
) -> None:
    text = f"{before} {secret} {after}"
    points = sorted({c % (len(text) + 1) for c in cuts})
    pieces = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    stream = POLICY.stream()
    emitted = "".join(stream.feed(p) for p in pieces) + stream.flush()
    assert emitted == POLICY.text(text)
    token = secret.split()[-1] if secret.startswith("Bearer") else secret
    assert token not in emitted


def test_thinking_and_errors_of_a_run_are_masked_and_held_text_released() -> None:
    key = "sk-proj-AbCdEfGhIjKlMnOp1234"
    thinking = f"I will use the key {key} to call the API."
    pieces = ["I will use the key s", "k-proj-AbCd", "EfGhIjKlMnOp1234 to", " call the API."]
    assert "".join(pieces) == thinking
    redactor = EventRedactor(POLICY)
    out: list[AgentEvent] = []
    for piece in pieces:
        out += redactor.events(AgentEvent.reasoning_delta(piece, "r1"))
    out += redactor.events(
        AgentEvent.tool_call("lookup", "{}", call_id="c1", response_id="r1", reasoning=thinking)
    )
    out += redactor.events(AgentEvent.text_delta(f"answer keeps {key}", "r2"))
    out += redactor.events(AgentEvent.failure(f"upstream said: invalid key {key}"))
    deltas = "".join(
        e.choices[0].delta.reasoning_content for e in out if e.is_partial and e.id == "r1"
    )
    assert deltas == f"I will use the key {MASK} to call the API."
    complete = next(e for e in out if e.choices and e.choices[0].message.tool_calls)
    assert complete.choices[0].message.reasoning_content == deltas
    assert out[-2].choices[0].delta.content == f"answer keeps {key}"  # the answer is kept
    assert (
        out[-1].error is not None and out[-1].error.message == f"upstream said: invalid key {MASK}"
    )

    # A run that ends while a delta is held back: close() releases it, masked.
    redactor = EventRedactor(POLICY)
    held = redactor.events(AgentEvent.reasoning_delta("key: sk", "r9"))
    assert held == [] or held[0].choices[0].delta.reasoning_content == "key: "
    released = redactor.close()
    assert "".join(e.choices[0].delta.reasoning_content for e in held + released) == "key: sk"


def test_unchanged_events_are_not_copied() -> None:
    event = AgentEvent.text_delta("plain text", "r1")
    thought = AgentEvent.reasoning_delta("plain thought. ", "r1")
    redactor = EventRedactor(POLICY)
    assert redactor.events(event)[0] is event
    assert redactor.events(thought)[0] is thought
    assert EventRedactor(OFF).events(AgentEvent.failure("sk-proj-AbCdEfGhIjKlMnOp1234"))[0].error


def test_log_records_are_masked_whatever_the_logger(caplog: pytest.LogCaptureFixture) -> None:
    redaction.install(redaction.current())
    with caplog.at_level(logging.INFO):
        logging.getLogger("some.library").info("calling with %s", "Bearer opaque-token-123456")
        logging.getLogger("trpc_bridge.x").warning("key sk-proj-AbCdEfGhIjKlMnOp1234 refused")
    assert [r.getMessage() for r in caplog.records] == [
        f"calling with Bearer {MASK}",
        f"key {MASK} refused",
    ]


def test_span_content_and_exception_messages_are_masked() -> None:
    from span_capture import in_memory_tracing

    from trpc_bridge.telemetry.spans import AgentCall, invoke_agent_attributes, record_failure

    key = "sk-proj-AbCdEfGhIjKlMnOp1234"
    call = AgentCall(input_text=f"use {key}", user_id="alice")
    attributes = invoke_agent_attributes("agent", call, record_content=True)
    assert key not in str(attributes) and MASK in str(attributes)

    tracing = in_memory_tracing()
    with tracing.provider.get_tracer("t").start_as_current_span("s") as span:
        try:
            raise ValueError(f"upstream refused {key}")
        except ValueError as exc:
            record_failure(span, exc)
    (finished,) = tracing.exporter.get_finished_spans()
    assert finished.status.description == f"upstream refused {MASK}"
    (event,) = finished.events
    assert key not in str(dict(event.attributes or {}))
