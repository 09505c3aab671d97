"""The docs stay true to the tree: every repository path, module and relative link they
name exists, the README stays a front page, and no text in the repository cites a
document its readers do not have or narrates a work session (that goes in commit
messages)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOP = ("bridge", "codecs", "telemetry", "tests", "bench", "docs", "interop", "protos")
#: The import package's folders (setup.py maps them into ``trpc_bridge``).
PACKAGE = {"codecs": "codecs", "telemetry": "telemetry"}

_CODE = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_PATH = re.compile(rf"^(?:{'|'.join(TOP)})/[\w./*\-–]*$")
_MODULE = re.compile(r"^trpc_bridge(?:\.\w+)+$")


def _tracked(*patterns: str) -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--", *patterns], cwd=ROOT, capture_output=True, text=True
    ).stdout.split()
    return [ROOT / name for name in listed if (ROOT / name).is_file()]


DOCS = _tracked("*.md")
SOURCES = _tracked("bridge/*.py", "codecs/*.py", "telemetry/*.py")


#: Outputs of builds, not in the tree: named in docs, never checked.
_BUILT = re.compile(r"/bin/|^build/")


def _exists(path: str) -> bool:
    path = re.sub(r"\d+–\w+", "*", path.rstrip("/."))  # a range of vectors, T01–T17
    if _BUILT.search(path):
        return True
    return any(ROOT.glob(path)) if "*" in path else (ROOT / path).exists()


def _module_exists(name: str) -> bool:
    """A module, an attribute of one, or a name the code spells out (a logger's)."""
    if any(f'"{name}"' in source.read_text(encoding="utf-8") for source in SOURCES):
        return True
    parts = name.split(".")
    for end in range(len(parts), 1, -1):  # a module, or an attribute of one
        try:
            if importlib.util.find_spec(".".join(parts[:end])) is not None:
                return True
        except ModuleNotFoundError:
            continue
    return False


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_paths_modules_and_links_exist(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    missing = []
    for code in _CODE.findall(text):
        word = code.split()[0].split(":")[0] if code.split() else ""
        known = _exists(word) if _PATH.match(word) else True
        if _MODULE.match(word):
            known = _module_exists(word)
        if not known:
            missing.append(word)
    for target in _LINK.findall(text):
        if "://" in target or target.startswith(("#", "mailto:")):
            continue
        if not (doc.parent / target.split("#")[0]).exists():
            missing.append(target)
    assert not missing, f"{doc.relative_to(ROOT)} names what the tree does not have"


_DOC_CITE = re.compile(r"docs/[\w/.-]+\.md")


def test_the_docs_the_code_cites_exist() -> None:
    cited = {
        f"{path.relative_to(ROOT)}: {name}"
        for path in _tracked("*.py", "*.go", "*.java", "*.mjs", "*.js", "*.json", "Makefile")
        for name in _DOC_CITE.findall(path.read_text(encoding="utf-8"))
        if not (ROOT / name).exists()
    }
    assert sorted(cited) == []


def test_the_readme_is_a_front_page() -> None:
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 250


def test_the_readme_layout_table_names_every_server_and_codec_wing() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    wings = [
        f"{folder.relative_to(ROOT)}/"
        for parent in ("bridge/server", "codecs")
        for folder in sorted((ROOT / parent).iterdir())
        if (folder / "__init__.py").exists()
    ]
    assert [w for w in wings if f"`{w}`" not in readme] == []


#: Phrases that belong in commit messages, not in the repository.
_NARRATIVE = re.compile(
    r"seed 00\d|this stop|previous stop|last stop|issue note|profile in the issue"
    r"|issue \[\d+\]|since \[\d+\]|issue's",
    re.IGNORECASE,
)


def test_no_work_session_narrative_and_no_private_citations() -> None:
    texts = _tracked(
        "*.py", "*.md", "*.json", "*.go", "*.java", "*.proto", "*.js", "*.mjs", "*.html", "Makefile"
    )
    found = [
        f"{path.relative_to(ROOT)}: {match.group(0)}"
        for path in texts
        if path.name != "test_docs.py"
        for match in _NARRATIVE.finditer(path.read_text(encoding="utf-8", errors="replace"))
    ]
    assert found == []
