"""The wheel is what a user installs: build it, install it into a fresh virtualenv, and run
``trpc-bridge serve`` and ``call`` from there, outside the checkout, so that a module or
folder missing from the wheel fails here and not on a user's machine."""

from __future__ import annotations

import shutil
import subprocess
import sys
import venv
from collections.abc import Iterator
from pathlib import Path

import pytest
from peers import running

#: Both tests read the one installed wheel: one pytest-xdist worker builds it.
pytestmark = pytest.mark.xdist_group("packaging")

ROOT = Path(__file__).resolve().parents[1]
#: Source folder → import package (as setup.py maps them).
PACKAGE_ROOTS = {
    "bridge": "trpc_bridge",
    "codecs": "trpc_bridge.codecs",
    "telemetry": "trpc_bridge.telemetry",
}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The ``bin`` folder of a fresh virtualenv with only the built wheel installed."""
    work = tmp_path_factory.mktemp("wheel")
    # Built from a copy: setuptools' build/ folder keeps files the tree no longer has.
    source = work / "source"
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for folder in PACKAGE_ROOTS:
        shutil.copytree(
            ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__")
        )
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work), str(source)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert build.returncode == 0, build.stderr
    assert "deprecat" not in build.stderr.lower(), build.stderr
    [wheel] = work.glob("*.whl")
    venv.create(work / "venv", with_pip=True)
    bin_dir = work / "venv" / "bin"
    install = subprocess.run(
        # No bytecode: compiling every dependency is a third of the install, and not
        # what this checks.
        [str(bin_dir / "python"), "-m", "pip", "install", "-q", "--no-compile", str(wheel)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert install.returncode == 0, install.stderr
    yield bin_dir


def test_every_package_folder_is_in_the_wheel(installed: Path) -> None:
    probe = subprocess.run(
        [
            str(installed / "python"),
            "-c",
            "import pkgutil, trpc_bridge; print(trpc_bridge.__file__); "
            "print('\\n'.join(m.name for m in pkgutil.walk_packages("
            "trpc_bridge.__path__, 'trpc_bridge.') if m.ispkg))",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=installed,  # not the checkout: its folders must not stand in for the wheel's
    )
    location, *packages = probe.stdout.split()
    assert location.startswith(str(installed.parent))
    folders = {
        ".".join((name, *init.parent.relative_to(ROOT / folder).parts))
        for folder, name in PACKAGE_ROOTS.items()
        for init in (ROOT / folder).rglob("__init__.py")
    }
    assert folders - {"trpc_bridge"} <= set(packages)
    # Package data: the type marker and the playground's page.
    package = Path(location).parent
    data = ["py.typed", *(f"server/doors/static/playground.{ext}" for ext in ("html", "js", "css"))]
    assert [name for name in data if not (package / name).is_file()] == []


def test_serve_and_call_from_the_installed_wheel(installed: Path) -> None:
    serve = [str(installed / "trpc-bridge"), "serve", "--port", "0", "--grpc-port", "0"]
    with running(serve, cwd=installed) as server:
        call = subprocess.run(
            [str(installed / "trpc-bridge"), "call", server.url, "weather in Paris", "--json"],
            capture_output=True,
            text=True,
            check=False,
            cwd=installed,
            timeout=120,
        )
    assert call.returncode == 0, call.stderr
    assert "Paris" in call.stdout and "get_weather" in call.stdout
