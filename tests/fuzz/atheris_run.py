"""Coverage-guided fuzzing (atheris, i.e. libFuzzer) of every target in
:mod:`fuzz_targets`, bounded: ``test_atheris_run.py`` runs it with ``-runs=N``,
``-rss_limit_mb`` (the memory bound) and ``-timeout`` (per input), seeded from the
golden vectors. The first input byte picks the target; an exception that is not one of
the target's typed errors is a crash (exit status non-zero, the input saved).

By hand: ``.venv/bin/python tests/fuzz/atheris_run.py -runs=100000 CORPUS_DIR``.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import sys
from pathlib import Path

import atheris

sys.path[:0] = [str(Path(__file__).parent), str(Path(__file__).parents[1])]

from fuzz_targets import TARGETS  # noqa: E402


def _instrument_bridge() -> None:
    """Coverage feedback from the bridge's own code. ``instrument_imports()`` does not see
    modules loaded through the editable install's import hook, and ``instrument_all()``
    takes minutes over the whole SDK: instrument the loaded trpc_bridge functions."""
    for name, module in list(sys.modules.items()):
        if not name.startswith("trpc_bridge"):
            continue
        for value in vars(module).values():
            if getattr(value, "__module__", None) != name:
                continue
            members = vars(value).values() if inspect.isclass(value) else [value]
            for member in members:
                function = getattr(member, "__func__", member)
                if inspect.isfunction(function):
                    atheris.instrument_func(function)


_instrument_bridge()


def one_input(data: bytes) -> None:
    if not data:
        return
    target = TARGETS[data[0] % len(TARGETS)]
    payload = data[1:]
    argument: object = payload
    if target.json:
        try:
            argument = json.loads(payload)
        except (ValueError, RecursionError):
            return  # not JSON: the frame decoders read parsed JSON only
    with contextlib.suppress(*target.typed):
        target.run(argument)


def main() -> None:
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
