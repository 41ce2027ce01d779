"""The package's build backend: setuptools, run on a copy of this directory in a temporary one.

setuptools writes ``build/`` and ``aigov_client.egg-info/`` into the directory it builds, and pip builds in place,
so ``pip install ./clients/python`` would leave both in the checkout. Building a copy keeps the source tree as it was.
Editable installs must point at the source itself, so they go to setuptools unchanged.
"""
from __future__ import annotations

import importlib
import os
import shutil
import tempfile
from typing import Any, Callable, Dict, List, Optional, TypeVar

# Imported by name: setuptools ships no type information.
_setuptools: Any = importlib.import_module("setuptools.build_meta")

T = TypeVar("T")

_SKIP = shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__", ".mypy_cache", ".pytest_cache", ".venv")


def _in_copy(hook: Callable[..., T], *directories: Optional[str], **kwargs: Any) -> T:
    here = os.getcwd()
    # pip passes absolute output directories; made so anyway, as the hook runs elsewhere.
    absolute = [None if d is None else os.path.abspath(d) for d in directories]
    with tempfile.TemporaryDirectory(prefix="aigov-client-build-") as scratch:
        source = os.path.join(scratch, "source")
        shutil.copytree(here, source, ignore=_SKIP)
        os.chdir(source)
        try:
            return hook(*absolute, **kwargs)
        finally:
            os.chdir(here)


def get_requires_for_build_wheel(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return list(_in_copy(_setuptools.get_requires_for_build_wheel, config_settings=config_settings))


def get_requires_for_build_sdist(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return list(_in_copy(_setuptools.get_requires_for_build_sdist, config_settings=config_settings))


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
    return str(_in_copy(_setuptools.prepare_metadata_for_build_wheel, metadata_directory, config_settings=config_settings))


def build_wheel(wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None, metadata_directory: Optional[str] = None) -> str:
    return str(_in_copy(_setuptools.build_wheel, wheel_directory, config_settings=config_settings, metadata_directory=metadata_directory))


def build_sdist(sdist_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
    return str(_in_copy(_setuptools.build_sdist, sdist_directory, config_settings=config_settings))


# Offered only where setuptools has them: a frontend tells an optional hook by its presence.
for _hook in ("get_requires_for_build_editable", "prepare_metadata_for_build_editable", "build_editable"):
    if hasattr(_setuptools, _hook):
        globals()[_hook] = getattr(_setuptools, _hook)
