"""Run the public A2A TCK against the bridge and print one line per transport and level.

    python tests/conformance/tck_run.py [--target tck|demo|proxy-go|sdk-echo] [--sut URL]
                                        [--levels must,should] [--require-must]
                                        [--strict-card]

The TCK is not part of the repository: it is read from ``$A2A_TCK_DIR`` (default
``../shared/a2a-tck`` beside the repository), run from there, and given its own
virtualenv under ``build/tck-venv`` built from its ``pyproject.toml`` dependencies
(PyPI only). Without the TCK the run is skipped, saying so, and exits 0.

Targets (each started on free loopback ports, stopped at the end):

- ``tck``: ``trpc-bridge serve --agent tck`` (the TCK's scenario agent);
- ``demo``: ``trpc-bridge serve --agent demo`` (what a user gets by default);
- ``proxy-go``: ``trpc-bridge proxy`` in front of the Go peer (``interop/go``, needs ``go``);
- ``sdk-echo``: a plain a2a-sdk server with an echo executor, the yardstick;
- ``tck-auth``: ``tck`` behind ``--auth api-key`` (its card declares the scheme): the TCK
  runs with a key on every request (``tck_credentials.py``), then the authentication
  requirements its tests leave unchecked are checked (``auth_requirements.py``:
  AUTH-SERVER-002, AUTH-SCOPE-001..003), each counted on its transport's line;
- ``--sut URL``: a server that is already running.

The bridge targets serve their default card (the 1.0 card merged with the 0.3 fields, which
every client reads and the TCK's card schema test refuses), or with ``--strict-card`` the
1.0 card alone (``docs/specs/a2a.md``).

One TCK session covers every transport the card declares; tests that do not depend on a
transport (the agent card) are counted on every transport's line, as a run restricted to
that transport would count them. A SHOULD test that fails is reported by the TCK as
``xfail``; it is counted as failed here. ``--require-must`` exits 1 when a MUST test
failed (``make test``).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import hashlib
import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
BUILD = ROOT / "build" / "conformance"
VENV = ROOT / "build" / "tck-venv"
TRANSPORTS = ("jsonrpc", "http_json", "grpc")
TRANSPORT_NAMES = {"jsonrpc": "JSON-RPC", "http_json": "HTTP+JSON", "grpc": "gRPC"}
#: The whole TCK session; its own tests time out long before this.
TCK_TIMEOUT_S = 900

sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "interop"))
from peers import bridge_server, build_gopeer, go_available, go_server, running  # noqa: E402

sys.path.insert(0, str(HERE))
import auth_requirements  # noqa: E402


def tck_dir() -> Path:
    return Path(os.environ.get("A2A_TCK_DIR") or ROOT.parent / "shared" / "a2a-tck").resolve()


# --- the TCK's virtualenv ---------------------------------------------------------------


def tck_dependencies(tck: Path) -> list[str]:
    project = tomllib.loads((tck / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [str(dependency) for dependency in project["dependencies"]]


def tck_python(tck: Path) -> Path:
    """The TCK virtualenv's interpreter, (re)built when the TCK's dependencies change."""
    deps = tck_dependencies(tck)
    digest = hashlib.sha256("\n".join(deps).encode()).hexdigest()
    stamp = VENV / ".stamp-deps"
    python = VENV / "bin" / "python"
    if python.exists() and stamp.exists() and stamp.read_text() == digest:
        return python
    print(f"building the TCK's virtualenv in {VENV.relative_to(ROOT)} …", flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True)
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, *deps], check=True)
    stamp.write_text(digest)
    return python


# --- the system under test --------------------------------------------------------------


#: ``tck-auth``: the key the TCK sends, and another user's (``auth_requirements``).
TCK_KEY, OTHER_KEY = "tck-key-" + "0" * 24, "other-key-" + "1" * 24


def _key_file() -> Path:
    BUILD.mkdir(parents=True, exist_ok=True)
    path = BUILD / "tck-auth-keys.txt"
    lines = [
        f"{user} sha256:{hashlib.sha256(key.encode()).hexdigest()}\n"
        for user, key in (("tck", TCK_KEY), ("other", OTHER_KEY))
    ]
    path.write_text("".join(lines), encoding="utf-8")
    return path


@contextlib.contextmanager
def system_under_test(target: str, sut: str, *, strict_card: bool = False) -> Iterator[str]:
    """The base URL of the server to test, running for the duration of the block."""
    card = ["--strict-card"] if strict_card else []
    if sut:
        yield sut.rstrip("/")
    elif target == "tck-auth":
        extra = ["--push-allow-loopback", "--auth", "api-key", "--api-keys", str(_key_file())]
        with bridge_server("tck", extra=extra) as process:
            yield process.url.rstrip("/")
    elif target in ("tck", "demo"):
        # The TCK's webhook receiver listens on this machine.
        with bridge_server(target, extra=["--push-allow-loopback", *card]) as process:
            yield process.url.rstrip("/")
    elif target == "sdk-echo":
        with running([sys.executable, str(HERE / "sdk_echo_server.py")]) as process:
            yield process.url.rstrip("/")
    elif target == "proxy-go":
        if not go_available():
            raise SystemExit("proxy-go needs the Go toolchain (`go`) to build interop/go")
        build_gopeer()
        with go_server("text") as upstream:
            cmd = [str(Path(sys.executable).parent / "trpc-bridge"), "proxy"]
            cmd += ["--upstream", upstream.url, "--host", "127.0.0.1"]
            cmd += ["--port", "0", "--grpc-port", "0", "--push-allow-loopback", *card]
            with running(cmd) as process:
                yield process.url.rstrip("/")
    else:
        raise SystemExit(f"unknown target {target!r}")


# --- running and counting ---------------------------------------------------------------


def run_tck(
    python: Path, tck: Path, url: str, levels: Sequence[str], name: str, credential: str = ""
) -> Path:
    """One TCK session against ``url``; returns the outcomes file (JSON lines)."""
    BUILD.mkdir(parents=True, exist_ok=True)
    outcomes = BUILD / f"{name}.jsonl"
    outcomes.unlink(missing_ok=True)
    cmd = [str(python), "-m", "pytest", "tests/compatibility", f"--sut-host={url}"]
    cmd += ["-m", " or ".join(levels), "-p", "no:cacheprovider", "-p", "tck_outcomes"]
    if credential:  # every request of the TCK carries it (tck_credentials.py)
        cmd += ["-p", "tck_credentials"]
    cmd += [f"--outcomes={outcomes}", "-q", "--tb=short", "-rfEs", "--webhook-host=127.0.0.1"]
    cmd += [f"--junitxml={BUILD / f'{name}.xml'}"]
    # The TCK directory may be read-only: no bytecode, no cache written there.
    env = {**os.environ, "PYTHONPATH": str(HERE), "PYTHONDONTWRITEBYTECODE": "1"}
    if credential:
        env["TCK_CREDENTIAL"] = credential
    log = BUILD / f"{name}.log"
    with log.open("w", encoding="utf-8") as out:
        subprocess.run(
            cmd, cwd=tck, env=env, stdout=out, stderr=subprocess.STDOUT, timeout=TCK_TIMEOUT_S
        )
    if not outcomes.exists():
        raise SystemExit(f"the TCK recorded no outcome; see {log}")
    return outcomes


@dataclass
class Tally:
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    reasons: collections.Counter[str] = field(default_factory=collections.Counter)
    failures: list[str] = field(default_factory=list)

    def line(self, transport: str, level: str) -> str:
        head = f"{TRANSPORT_NAMES[transport]:<9} {level.upper():<6}"
        text = f"{head} {self.passed} passed, {self.failed} failed, {self.skipped} skipped"
        if self.reasons:
            summary = " | ".join(f"{n}× {reason}" for reason, n in self.reasons.most_common())
            text += f"  [skipped: {summary}]"
        return text


def tally(records: Sequence[dict[str, str]]) -> dict[tuple[str, str], Tally]:
    """Counts per (transport, level); transport-agnostic tests count on every transport."""
    present = {r["transport"] for r in records} & set(TRANSPORTS)
    tallies: dict[tuple[str, str], Tally] = collections.defaultdict(Tally)
    for record in records:
        transports = sorted(present) if record["transport"] == "any" else [record["transport"]]
        for transport in transports:
            counts = tallies[(transport, record["level"])]
            outcome = record["outcome"]
            if outcome in ("passed", "xpassed"):
                counts.passed += 1
            elif outcome == "skipped":
                counts.skipped += 1
                counts.reasons[record["reason"]] += 1
            else:  # failed, xfailed (a SHOULD that is not met), error
                counts.failed += 1
                counts.failures.append(f"{record['id']}: {record['reason']}")
    return tallies


def report(tallies: dict[tuple[str, str], Tally], levels: Sequence[str], title: str) -> list[str]:
    lines = [f"A2A TCK against {title}"]
    for transport in TRANSPORTS:
        for level in levels:
            if (transport, level) in tallies:
                lines.append("  " + tallies[(transport, level)].line(transport, level))
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument(
        "--target", default="tck", help="tck | tck-auth | demo | proxy-go | sdk-echo"
    )
    parser.add_argument("--sut", default="", help="base URL of a server already running")
    parser.add_argument("--levels", default="must,should", help="comma-separated")
    parser.add_argument("--require-must", action="store_true", help="exit 1 on a MUST failure")
    parser.add_argument("--show-failures", action="store_true", help="list every failed test")
    parser.add_argument(
        "--strict-card", action="store_true", help="serve the bridge's A2A 1.0 card alone"
    )
    args = parser.parse_args(argv)
    levels = [level.strip() for level in args.levels.split(",") if level.strip()]

    tck = tck_dir()
    if not (tck / "tests" / "compatibility").is_dir():
        print(f"A2A TCK not found at {tck} (set A2A_TCK_DIR): conformance run skipped")
        return 0
    python = tck_python(tck)
    name = "sut" if args.sut else args.target + ("-strict-card" if args.strict_card else "")
    auth = args.target == "tck-auth" and not args.sut
    credential = f"X-API-Key: {TCK_KEY}" if auth else ""
    with system_under_test(args.target, args.sut, strict_card=args.strict_card) as url:
        outcomes = run_tck(python, tck, url, levels, name, credential)
        extra = auth_requirements.check(url, TCK_KEY, OTHER_KEY) if auth else []
    records = [json.loads(line) for line in outcomes.read_text(encoding="utf-8").splitlines()]
    records += extra
    tallies = tally(records)
    title = args.sut or f"--target {args.target}" + (" --strict-card" if args.strict_card else "")
    print("\n".join(report(tallies, levels, title)), flush=True)
    for record in extra:  # counted above too; named here, as the TCK names none of them
        print(f"  {record['id']}: {record['outcome']} {record['reason']}".rstrip())
    must_failures = [f for (_, level), t in tallies.items() if level == "must" for f in t.failures]
    if args.show_failures or (args.require_must and must_failures):
        failures = sorted({f for t in tallies.values() for f in t.failures})
        print("\n".join(["failed:", *(f"  {f}" for f in failures)]))
    print(f"(log: {BUILD.relative_to(ROOT) / (name + '.log')})")
    return 1 if args.require_must and must_failures else 0


if __name__ == "__main__":
    sys.exit(main())
