"""The package layout, derived instead of listed: ``bridge/``, ``codecs/`` and
``telemetry/`` are one import package, ``trpc_bridge`` (a top-level ``codecs`` package would
shadow the standard library's), and every subfolder with an ``__init__.py`` below them is
a subpackage. A new folder is therefore in the wheel without anyone listing it
(``tests/test_packaging.py`` installs the built wheel to check). Everything else about
the project is in ``pyproject.toml``."""

from setuptools import find_packages, setup

ROOTS = {
    "trpc_bridge": "bridge",
    "trpc_bridge.codecs": "codecs",
    "trpc_bridge.telemetry": "telemetry",
}

packages = [
    f"{name}.{sub}" if sub else name
    for name, folder in ROOTS.items()
    for sub in ("", *find_packages(folder))
]

setup(package_dir=ROOTS, packages=packages)
