"""The flags and environment variables the docs name exist: every ``--flag`` written in
code (a fenced block or an inline span) of README.md, docs/**/*.md and bench/README.md
that belongs to a ``trpc-bridge`` command is an option of that command's parser, and
every ``TRPC_BRIDGE_*`` variable is one the code reads.

A flag belongs to the command written before it: on its line of a fenced block (or
earlier in the block, for a comment or a continued line), or in its inline span. In
prose a span that starts with a flag (`--keep-tasks`) is only said to be another tool's
when an earlier span of its paragraph, list item or table row starts with that tool
(``make``, ``pytest``, ``gopeer``, a script ...): that tool's flags are not checked. Any
other flag must be an option of its ``trpc-bridge`` command, or, where prose does not say
which command (a list of them is common), of some ``trpc-bridge`` command. The parsers
are built in-process from the Typer app, the one ``trpc-bridge --help`` shows.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main

from trpc_bridge.cli import app
from trpc_bridge.cli.credential_flags import read_credentials

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted([ROOT / "README.md", ROOT / "bench" / "README.md", *(ROOT / "docs").rglob("*.md")])
SOURCES = [
    path for folder in ("bridge", "codecs", "telemetry") for path in (ROOT / folder).rglob("*.py")
]

#: Flags written with no command before them that are not ``trpc-bridge``'s, each with
#: whose they are.
NOT_OURS = {
    "--dist": "pytest-xdist's (docs/testing.md: `--dist loadgroup`)",
    "--go_opt": "protoc's Go plugin option (docs/agenthost.md, after 'protoc' in prose)",
    "--go-grpc_opt": "protoc's Go gRPC plugin option (docs/agenthost.md)",
    "--no-others": "bench/vs_go.py's (bench/README.md's list of its flags)",
}

#: Commands whose flags are not ``trpc-bridge``'s, when a line or span starts with them.
_TOOLS = {
    "agenthost",
    "curl",
    "docker",
    "git",
    "go",
    "gopeer",
    "grpcurl",
    "java",
    "kubectl",
    "make",
    "mvn",
    "node",
    "npm",
    "npx",
    "openssl",
    "pip",
    "protoc",
    "psql",
    "pytest",
    "python",
    "python3",
    "redis-cli",
    "ruff",
    "mypy",
    "uvicorn",
    "valgrind",
    "callgrind_annotate",
}
_SCRIPT = re.compile(r"\.(?:py|sh|mjs|js)$")
_SEPARATORS = {"|", "||", "&", "&&", ";"}
_FLAG = re.compile(r"(?<![\w-])--[a-z][\w-]*")
_ENV = re.compile(r"TRPC_BRIDGE_[A-Z0-9_]*[A-Z0-9]")
_FENCE = re.compile(r"^\s*(```|~~~)")
_SPAN = re.compile(r"`([^`\n]+)`")
#: Where a new paragraph of prose starts: a blank line, a list item, a table row, a heading.
_PROSE_BREAK = re.compile(r"^\s*(?:$|[-*+] |\d+\. |\||#)")

_FOREIGN = "a command that is not trpc-bridge"
#: Commands a span may name without ``trpc-bridge`` in front (``api-key`` is also a scheme).
_BARE = {"serve", "call", "proxy", "acp"}
_ROOT_CMD = "trpc-bridge"


def _parsers() -> dict[str, Any]:
    """The root command and each subcommand (Typer's own copy of click's classes)."""
    root = typer.main.get_command(app)
    return {_ROOT_CMD: root, **getattr(root, "commands")}  # noqa: B009 (a group's)


def _options(command: Any) -> set[str]:
    return {
        name
        for param in command.params
        if param.param_type_name == "option"
        for name in (*param.opts, *param.secondary_opts)
    }


PARSERS = _parsers()
OPTIONS = {name: _options(command) for name, command in PARSERS.items()}
#: A root option (``--sdk-spans``) may also be written after the command's name.
EVERY = set().union(*OPTIONS.values())


def _command_of(word: str, first: bool, context: str | None) -> str | None:
    """The command ``word`` names (``None``: it names none), given where it stands."""
    bare = word.strip("[](){}\"',").rsplit("/", 1)[-1]
    if bare == _ROOT_CMD:
        return _ROOT_CMD
    if context == _ROOT_CMD and bare in PARSERS:
        return bare
    if first and bare in _BARE:
        return bare  # `serve --agent ...`, `proxy --upstream`
    if first and (bare in _TOOLS or _SCRIPT.search(bare)):
        return _FOREIGN
    return None


def _scan(text: str, context: str | None) -> tuple[list[tuple[str, str | None]], str | None]:
    """The flags of one line of code (or one span) as ``(flag, command)``, and the command
    of its first pipeline stage, which the lines after it continue."""
    flags: list[tuple[str, str | None]] = []
    first, carry = True, None
    for word in text.split():
        if word in _SEPARATORS:
            carry = carry or context
            context, first = None, True
            continue
        named = _command_of(word, first, context)
        if named is not None:
            context = named
        flags += [(flag, context) for flag in _FLAG.findall(word)]
        first = False
    return flags, carry or context


def _segments(text: str) -> Iterator[tuple[bool, list[str]]]:
    """``(is_code, pieces)``: a fenced block as its logical lines, a paragraph (list
    item, table row) of prose as its inline spans."""
    block: list[str] | None = None
    prose: list[str] = []
    for line in text.splitlines():
        if _FENCE.match(line):
            if block is None:
                if prose:
                    yield False, prose
                prose, block = [], []
            else:
                yield True, re.sub(r"\\\n", " ", "\n".join(block)).splitlines()
                block = None
            continue
        if block is not None:
            block.append(line)
            continue
        if _PROSE_BREAK.match(line) and prose:
            yield False, prose
            prose = []
        prose += _SPAN.findall(line)
    if prose:
        yield False, prose


def doc_flags(text: str) -> Iterator[tuple[str, str | None]]:
    """``(flag, command)`` for each flag written in code in ``text``; the command is
    ``None`` when nothing before the flag says whose it is."""
    for code, pieces in _segments(text):
        context: str | None = None
        for piece in pieces:
            start = context if code or context == _FOREIGN else None
            found, context = _scan(piece, start)
            yield from found


def _missing(flag: str, command: str | None) -> bool:
    if command == _FOREIGN or flag in NOT_OURS:
        return False
    if command is None or command == _ROOT_CMD:
        known = EVERY
    else:
        known = OPTIONS[command] | OPTIONS[_ROOT_CMD]
    if flag.endswith("-"):  # `--upstream-…`: a family of flags
        return not any(name.startswith(flag) for name in known)
    return flag not in known


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_flags_the_docs_name_exist(doc: Path) -> None:
    missing = sorted(
        {
            f"{command or 'any trpc-bridge command'}: {flag}"
            for flag, command in doc_flags(doc.read_text(encoding="utf-8"))
            if _missing(flag, command)
        }
    )
    where = doc.relative_to(ROOT)
    assert not missing, f"{where} names flags the CLI does not have: " + "; ".join(missing)


def _composed_secret_variables(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """The client-secret variables, which the CLI composes from a flag prefix: the ones
    :func:`read_credentials` is seen to read."""
    found = set()
    for prefix in ("", "upstream-"):
        name = "TRPC_BRIDGE_" + prefix.upper().replace("-", "_") + "CLIENT_SECRET"
        monkeypatch.setenv(name, "s")
        key = prefix.replace("-", "_")
        values: dict[str, Any] = {
            key + field: "" for field in ("token", "token_file", "client_secret_file")
        }
        values |= {key + "client_id": "id", key + "token_url": "", key + "audience": ""}
        values[key + "scope"] = None
        if read_credentials(values, prefix).client_secret == "s":
            found.add(name)
        monkeypatch.delenv(name)
    return found


def test_the_environment_variables_the_docs_name_are_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read = {
        str(param.envvar)
        for command in PARSERS.values()
        for param in command.params
        if param.envvar
    }
    read |= {name for path in SOURCES for name in _ENV.findall(path.read_text(encoding="utf-8"))}
    read |= _composed_secret_variables(monkeypatch)
    named = {
        f"{doc.relative_to(ROOT)}: {name}"
        for doc in DOCS
        for name in _ENV.findall(doc.read_text(encoding="utf-8"))
        if name not in read
    }
    assert not named, "variables no code reads: " + "; ".join(sorted(named))


def test_the_scan_attributes_flags_to_their_command() -> None:
    text = (
        "```sh\n"
        "trpc-bridge serve --agent a:b \\\n    --port 1 | make -j3 --output-sync=target\n"
        "# --tls-cert too\n"
        "```\n\n"
        "With `trpc-bridge call` give `--token`; `pytest -n 4 --dist` and `--x`.\n"
        "| `call --key` | `api-key --auth` |\n"
        "- `proxy --upstream` and `--upstream-…`\n"
    )
    assert list(doc_flags(text)) == [
        ("--agent", "serve"),
        ("--port", "serve"),
        ("--output-sync", _FOREIGN),
        ("--tls-cert", "serve"),
        ("--token", None),
        ("--dist", _FOREIGN),
        ("--x", _FOREIGN),
        ("--key", "call"),
        ("--auth", None),
        ("--upstream", "proxy"),
        ("--upstream-", None),
    ]
