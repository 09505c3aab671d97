"""Secrets out of what the bridge writes on the caller's behalf: one policy, one module.

What it covers (``docs/security.md`` lists the places):

- an agent's thinking and error text, in every run on every door: the server's runner
  passes each run's events through an :class:`EventRedactor` before any encoder sees
  them, so no encoding carries them unmasked (tfrs envelopes and their text fallback,
  trpc's reasoning parts, AG-UI reasoning, the E2A records an ACP client gets), nor
  ``Task.history``, nor the task store;
- tfrs progress text and tool output (the progress producer, ``codecs/tfrs``);
- the E2A wire log (every string of every line) and log records (all of them);
- span content: the caller's input, tool arguments and results, exception messages.

The answer an agent gives (its text) and the tool calls and results it sends are its
own output to its caller, and are carried as they are.

A :class:`Redaction` masks, in this order:

- every value under a secret-bearing key of a JSON-like value (``authorization``,
  ``api_key``, ``bearer_token``, ``client_secret``, … matched without regard to case,
  ``-`` and ``_``); a ``*_ref`` key names a secret kept elsewhere and stays;
- every match of its patterns in text: by default the credential formats that must
  never leave (provider API keys ``sk-…``, AWS key ids, GitHub / GitLab / Slack / Google
  tokens, JWTs, the credential after ``Bearer`` / ``Basic``, PEM private keys);
- whatever its ``hook`` (``str -> str``) masks on top, for an organisation's own
  formats. A hook that raises masks the whole text: failing closed.

Text that arrives in pieces (thinking deltas) goes through a :class:`StreamRedactor`,
which holds back the end of the text while it could still be the start of a secret
(a partial match of a pattern, found with the ``regex`` module's partial matching), so
a key split across two deltas is masked as a whole, and joined pieces equal the masked
whole text.

The policy is one per process (:func:`install`, from ``serve``/``proxy``'s
``--redact-pattern`` / ``--redact-hook`` / ``--no-redact``); :func:`current` is what the
codecs and telemetry read. Installing it also masks log records, whatever logger or
handler writes them (a log-record factory).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import regex

from trpc_bridge.events import AgentEvent, ChatMessage

MASK = "[redacted]"

#: Keys whose values are secrets in any JSON-like value (compared lower-case, without
#: ``-`` and ``_``).
SECRET_KEYS = frozenset(
    {
        "bearertoken",
        "authorization",
        "proxyauthorization",
        "cookie",
        "setcookie",
        "xapikey",
        "apikey",
        "accesstoken",
        "refreshtoken",
        "idtoken",
        "clientsecret",
        "password",
        "secret",
    }
)

#: Credential formats masked by default. Each starts at a boundary (no letter or digit
#: before it), so words that merely contain the prefix stay.
DEFAULT_PATTERNS: tuple[str, ...] = (
    r"(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{16,}",  # OpenAI, Anthropic (sk-ant-…), …
    r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])",  # AWS access key ids
    r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})",
    r"(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20,}",  # GitLab
    r"(?<![A-Za-z0-9-])xox[abposr]-[A-Za-z0-9-]{10,}",  # Slack
    r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}",  # Google API keys
    r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{6,}\.eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}",  # JWTs
    # The credential of an Authorization value (the scheme, behind, stays: a look-behind,
    # which a stream's context of text already sent can satisfy); not a word after
    # "basic" in prose: it holds a digit or a symbol of the token alphabet.
    r"(?i:(?<=\b(?:bearer|basic)\s+))(?=[A-Za-z0-9._~+/-]*[0-9._~+/])[A-Za-z0-9._~+/-]{12,}=*",
    r"-----BEGIN[A-Z ]*PRIVATE KEY-----[\s\S]*?-----END[A-Z ]*PRIVATE KEY-----",
)

#: What every match of a default pattern contains, lower-cased: text without any of these
#: (nor, at its end, the start of one) holds no default secret, and is passed over with a
#: few substring tests (most text; the patterns themselves cost ten to a hundred times
#: more per character).
_ANCHORS = (
    "sk-",
    "akia",
    "asia",
    *(f"gh{c}_" for c in "pousr"),
    "github_pat_",
    "glpat-",
    *(f"xox{c}-" for c in "abposr"),
    "aiza",
    "eyj",
    "bearer",
    "basic",
    "-----begin",
)
_ANCHOR_STARTS = frozenset(a[:k] for a in _ANCHORS for k in range(1, len(a)))
_LONGEST_START = max(len(a) for a in _ANCHORS) - 1
#: How far back in a stream's context an anchor is looked for: the longest anchor, and a
#: few blanks between ``Bearer`` and its token.
_ANCHOR_REACH = _LONGEST_START + 1 + 8


#: The anchors by a character each of them holds: text without ``-`` or ``_`` (most
#: prose) needs only the others looked for.
_DASHED = tuple(a for a in _ANCHORS if "-" in a)
_UNDERSCORED = tuple(a for a in _ANCHORS if "_" in a and "-" not in a)
_PLAIN = tuple(a for a in _ANCHORS if "-" not in a and "_" not in a)


def _may_hold_secret(lowered: str) -> bool:
    for anchor in _PLAIN:
        if anchor in lowered:
            return True
    if "-" in lowered:
        for anchor in _DASHED:
            if anchor in lowered:
                return True
    if "_" in lowered:
        for anchor in _UNDERSCORED:
            if anchor in lowered:
                return True
    return False


def _may_start_secret(lowered: str) -> bool:
    """The text ends with the beginning of an anchor (a secret may be arriving)."""
    for k in range(1, min(len(lowered), _LONGEST_START) + 1):
        if lowered[-k:] in _ANCHOR_STARTS:
            return True
    return False


#: A stream holds back at most this much text waiting for a possible secret to end; past
#: it the held text is masked whole (a PEM key is about 3 KB).
HOLD_LIMIT = 16 * 1024
#: Text already emitted that a stream keeps as look-behind context (``Bearer `` before a
#: token that arrives in the next delta).
_CONTEXT = 64

log = logging.getLogger(__name__)


@functools.lru_cache(maxsize=4096)  # the same few keys come back on every record
def is_secret_key(key: str) -> bool:
    return key.lower().replace("-", "").replace("_", "") in SECRET_KEYS


@dataclass(frozen=True)
class Redaction:
    """A redaction policy (see the module doc). ``Redaction(patterns=())`` with no hook
    masks only secret-bearing keys; :data:`OFF` masks nothing."""

    patterns: tuple[str, ...] = DEFAULT_PATTERNS
    hook: Callable[[str], str] | None = None
    #: Mask values under secret-bearing keys (:func:`is_secret_key`).
    keys: bool = True

    @functools.cached_property
    def _regex(self) -> regex.Pattern[str] | None:
        if not self.patterns:
            return None
        return regex.compile("|".join(f"(?:{p})" for p in self.patterns))

    @functools.cached_property
    def _prefiltered(self) -> bool:
        """Only default patterns: the anchors tell text that cannot match."""
        return bool(self.patterns) and set(self.patterns) <= set(DEFAULT_PATTERNS)

    def check(self) -> None:
        """Raises ``ValueError`` naming a pattern that does not compile."""
        for pattern in self.patterns:
            try:
                regex.compile(pattern)
            except regex.error as exc:
                raise ValueError(f"redaction pattern {pattern!r}: {exc}") from None

    def text(self, text: str) -> str:
        """``text`` with every secret masked."""
        if not text:
            return text
        if self._regex is not None and (not self._prefiltered or _may_hold_secret(text.lower())):
            text = self._regex.sub(MASK, text)
        return self._hooked(text)

    def _hooked(self, text: str) -> str:
        if self.hook is None or not text:
            return text
        try:
            return self.hook(text)
        except Exception:
            log.warning("redaction hook failed; the whole text is masked", exc_info=False)
            return MASK

    def value(self, value: Any) -> Any:
        """A copy of the JSON-like ``value`` with secret-bearing keys' values and secrets
        in its strings masked."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {
                k: (
                    MASK
                    if self.keys and isinstance(k, str) and is_secret_key(k) and v is not None
                    else self.value(v)
                )
                for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value

    def stream(self) -> StreamRedactor:
        return StreamRedactor(self)

    def _safe_end(self, text: str, start: int) -> int:
        """Where the text that can be emitted now ends: before the first match that
        might still grow (a partial match, or one that reaches the end)."""
        assert self._regex is not None
        for match in self._regex.finditer(text, pos=start, partial=True):
            begin: int = match.start()
            if begin == len(text):
                break  # the empty partial match every pattern has at the very end
            if match.partial or match.end() == len(text):
                return max(begin, start)
        return len(text)


OFF = Redaction(patterns=(), keys=False)


def load_hook(spec: str) -> Callable[[str], str]:
    """``package.module:function`` (a ``str -> str`` callable), for ``--redact-hook``.
    Raises ``ValueError`` saying what is wrong."""
    import importlib

    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ValueError(f"redaction hook {spec!r}: expected package.module:function")
    try:
        hook = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"redaction hook {spec!r} cannot be loaded: {exc}") from None
    if not callable(hook):
        raise ValueError(f"redaction hook {spec!r} is not callable")
    return hook  # type: ignore[no-any-return]


def policy_of(
    *, enabled: bool = True, extra_patterns: tuple[str, ...] = (), hook: str = ""
) -> Redaction:
    """The policy the serving commands' flags describe: the default patterns plus
    ``extra_patterns``, and the hook named; ``enabled=False``: :data:`OFF`. Raises
    ``ValueError`` for a pattern or hook that cannot be used."""
    if not enabled:
        return OFF
    policy = Redaction(
        patterns=DEFAULT_PATTERNS + tuple(extra_patterns),
        hook=load_hook(hook) if hook else None,
    )
    policy.check()
    return policy


@dataclass
class StreamRedactor:
    """Masks text that arrives in pieces: :meth:`feed` each piece, :meth:`flush` at the
    end; the pieces it returns, joined, are the whole text masked."""

    policy: Redaction
    _held: str = ""
    _context: str = field(default="", repr=False)

    def feed(self, piece: str) -> str:
        policy = self.policy
        if policy._regex is None:
            return policy._hooked(piece)
        text = self._context + self._held + piece
        start = len(self._context)
        if policy._prefiltered:
            # The new text, and enough of the context for an anchor that began there.
            lowered = text[max(0, start - _ANCHOR_REACH) :].lower()
            if not _may_hold_secret(lowered) and not _may_start_secret(lowered):
                out = text[start:]  # no secret, nor the start of one: all of it, as it is
                self._held, self._context = "", text[-_CONTEXT:]
                return policy._hooked(out)
        end = self.policy._safe_end(text, start)
        if len(text) - end > HOLD_LIMIT:
            self._held, self._context = "", ""
            return MASK  # a secret that never ends: masked whole, nothing of it kept
        self._held = text[end:]
        out = text[start:end]
        self._context = (self._context + out)[-_CONTEXT:]
        return self._mask(text[:end], start)

    def flush(self) -> str:
        """What is still held back, masked (the stream ended)."""
        if self.policy._regex is None or not self._held:
            return ""
        text = self._context + self._held
        start = len(self._context)
        self._held, self._context = "", ""
        return self._mask(text, start)

    def _mask(self, text: str, start: int) -> str:
        """``text[start:]`` masked, with ``text[:start]`` as look-behind context only."""
        assert self.policy._regex is not None
        if self.policy._prefiltered and not _may_hold_secret(text.lower()):
            return self.policy._hooked(text[start:])
        out, at = [], start
        for match in self.policy._regex.finditer(text, pos=start):
            out.append(text[at : match.start()])
            out.append(MASK)
            at = match.end()
        out.append(text[at:])
        return self.policy._hooked("".join(out))


class EventRedactor:
    """One run's agent events with their thinking (``reasoning_content``) and error text
    masked. Reasoning deltas of a response go through one :class:`StreamRedactor`: what
    it holds back is released as one more reasoning delta before the response's
    complete event, before a terminal event, and at :meth:`close` — so joined deltas
    still equal the complete response's (masked) reasoning. Events are copied only when
    something changes; a delta that only carried reasoning that is all held back is
    left out."""

    def __init__(self, policy: Redaction) -> None:
        self.policy = policy
        self._active = policy is not OFF
        self._held: dict[str, StreamRedactor] = {}

    def events(self, event: AgentEvent) -> list[AgentEvent]:
        if not self._active:
            return [event]
        if event.error is None and not self._held:
            # Most events: no thinking, no error, nothing held back (text deltas).
            for choice in event.choices:
                if choice.delta.reasoning_content or choice.message.reasoning_content:
                    break
            else:
                return [event]
        out: list[AgentEvent] = []
        if self._held and (event.is_terminal_error() or event.is_runner_completion() or event.done):
            out += self.close()
        elif self._held and not event.is_partial and event.id in self._held:
            out += self._release(event.id)
        changed = self._masked(event)
        if changed is not None:
            if changed is _DROPPED:
                return out
            event = changed
        out.append(event)
        return out

    def close(self) -> list[AgentEvent]:
        """What is still held back, as reasoning deltas (the run ended)."""
        out: list[AgentEvent] = []
        for response_id in list(self._held):
            out += self._release(response_id)
        return out

    def _release(self, response_id: str) -> list[AgentEvent]:
        tail = self._held.pop(response_id).flush()
        return [AgentEvent.reasoning_delta(tail, response_id)] if tail else []

    def _masked(self, event: AgentEvent) -> AgentEvent | None:
        """A masked copy of ``event``, ``_DROPPED``, or None when nothing changes."""
        changes: list[tuple[ChatMessage, str]] = []  # (message in ``event``, masked text)
        for choice in event.choices:
            for message, streamed in ((choice.delta, True), (choice.message, event.is_partial)):
                text = message.reasoning_content
                if not text:
                    continue
                if streamed:
                    stream = self._held.get(event.id)
                    if stream is None:
                        stream = self._held[event.id] = self.policy.stream()
                    masked = stream.feed(text)
                else:
                    masked = self.policy.text(text)
                if masked != text:
                    changes.append((message, masked))
        error = event.error
        new_error = self.policy.text(error.message) if error is not None else ""
        if not changes and (error is None or new_error == error.message):
            return None
        # Copied, then changed: the agent's own event objects are left as they were.
        copy = event.model_copy(deep=True)
        if copy.error is not None:
            copy.error.message = new_error
        for original, masked in changes:
            for mine, theirs in zip(copy.choices, event.choices, strict=True):
                if original is theirs.delta:
                    mine.delta.reasoning_content = masked
                elif original is theirs.message:
                    mine.message.reasoning_content = masked
        if (
            changes
            and copy.error is None
            and not copy.state_delta
            and copy.usage is None  # the tokens still count
            and all(c.delta.is_empty() and c.message.is_empty() for c in copy.choices)
        ):
            return _DROPPED  # a delta that only held back reasoning: nothing to send yet
        return copy


#: :meth:`EventRedactor._masked`'s "leave this event out".
_DROPPED = AgentEvent()


_current = Redaction()


def current() -> Redaction:
    """The process's policy (:func:`install`); the default policy until one is installed."""
    return _current


def install(policy: Redaction) -> None:
    """Make ``policy`` the process's policy, for log records too."""
    global _current
    policy.check()
    _current = policy
    _install_log_masking()


_base_factory: Callable[..., logging.LogRecord] | None = None


def _install_log_masking() -> None:
    """Every log record is masked when it is made (whatever logger, handler or level
    filter later sees it): its message formatted once, masked, and its arguments gone."""
    global _base_factory
    if _base_factory is not None:
        return
    _base_factory = logging.getLogRecordFactory()
    base = _base_factory

    def masked_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = base(*args, **kwargs)
        policy = _current
        if policy is OFF:
            return record
        try:
            message = record.getMessage()
        except Exception:  # a broken format string: left for the handler to report
            return record
        masked = policy.text(message)
        if masked != message or record.args:
            record.msg, record.args = masked, None
        return record

    logging.setLogRecordFactory(masked_record)
