"""The signing, redaction and credential flags that cannot be used say why in one line
and exit 2, naming the flag or the file, never a key's or a secret's content."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

CLI = Path(sys.executable).parent / "trpc-bridge"
SECRET = "never-shown-secret-value"


def _error_line(*args: str, code: int = 2) -> str:
    result = subprocess.run(
        [str(CLI), *args], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )
    assert result.returncode == code, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert SECRET not in result.stderr and "BEGIN" not in result.stderr
    return lines[0]


SERVE = ("serve", "--port", "0", "--grpc-port", "-1", "--no-playground")


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (("--card-signing-key", "{missing}"), "cannot read signing key"),
        (("--card-signing-key", "{garbage}"), "garbage.pem holds no unencrypted PEM private key"),
        (("--push-signing-key", "{garbage}"), "no unencrypted PEM private key"),
        (("--push-key-rotation", "-1"), "--push-key-rotation"),
        (("--redact-pattern", "(unclosed"), "redaction pattern"),
        (("--redact-hook", "no_such_module:mask"), "redaction hook"),
    ],
)
def test_serving_flags_that_cannot_be_used(
    tmp_path: Path, flags: tuple[str, ...], says: str
) -> None:
    garbage = tmp_path / "garbage.pem"
    garbage.write_text(f"-----BEGIN PRIVATE KEY-----\n{SECRET}\n-----END PRIVATE KEY-----\n")
    values = [f.format(missing=tmp_path / "missing.pem", garbage=garbage) for f in flags]
    assert says in _error_line(*SERVE, *values)


def test_client_credential_flags_that_do_not_go_together(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(SECRET)
    url = "http://127.0.0.1:9"
    line = _error_line("call", url, "hi", "--token", SECRET, "--token-file", str(token_file))
    assert "give one credential" in line
    assert "needs its secret" in _error_line("call", url, "hi", "--client-id", "bridge")
    line = _error_line(
        "proxy", "--upstream", url, "--upstream-auth", "forward", "--upstream-token", SECRET
    )
    assert "--upstream-auth forward" in line
    assert "holds a private key" in _error_line(
        "call", url, "hi", "--card-key", str(_private_key(tmp_path))
    )


def _private_key(tmp_path: Path) -> Path:
    path = tmp_path / "private.pem"
    path.write_text(f"-----BEGIN PRIVATE KEY-----\n{SECRET}\n-----END PRIVATE KEY-----\n")
    return path
