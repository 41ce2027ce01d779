"""The README's Python client section: its install command works offline and its examples run.

(The examples run in this process; test/python-client.test.ts runs mypy --strict on them, alongside this suite.)
"""
from __future__ import annotations

import importlib.util
import os
import re
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

from conftest import REPO, Service

PACKAGE = REPO / "clients" / "python"
README = (REPO / "docs" / "clients.md").read_text(encoding="utf-8")
_START = README.index("## Python client")
_END = README.find("\n## ", _START + 1)
SECTION = README[_START : _END if _END != -1 else len(README)]
EXAMPLES = re.findall(r"```python\n(.*?)```", SECTION, re.S)
SHELL = re.findall(r"```sh\n(.*?)```", SECTION, re.S)


def write_examples(directory: Path) -> List[Path]:
    files = []
    for i, code in enumerate(EXAMPLES):
        path = directory / f"example_{i + 1}.py"
        path.write_text(code, encoding="utf-8")
        files.append(path)
    return files


def env_for(service: Service) -> Dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), "SERVICE_API_URL": service.base_url, "SERVICE_API_KEY": service.api_key, "SERVICE_TENANT": service.tenant}


def test_the_section_has_its_examples() -> None:
    assert len(EXAMPLES) == 4 and len(SHELL) == 1


def test_the_examples_run(service: Service, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for name, value in env_for(service).items():
        monkeypatch.setenv(name, value)
    for path in write_examples(tmp_path):
        runpy.run_path(str(path), run_name="__main__")
        printed = capsys.readouterr()
        assert printed.out.strip() and printed.err == "", f"{path.name}: {printed.out}{printed.err}"


def test_the_install_command_works_without_the_package_index(service: Service, tmp_path: Path) -> None:
    if importlib.util.find_spec("pip") is None or importlib.util.find_spec("setuptools") is None:
        pytest.skip("pip or setuptools is missing (Debian: python3-pip python3-setuptools)")
    (tmp_path / "clients").mkdir()
    (tmp_path / "clients" / "python").symlink_to(PACKAGE)
    def listing() -> List[str]:
        # __pycache__ aside: importing the build backend compiles it, as importing any module of the tree does.
        return sorted(name for name in os.listdir(PACKAGE) if name != "__pycache__")

    before = listing()
    result = subprocess.run(["sh", "-c", SHELL[0]], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                            env={"PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}", "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    assert result.returncode == 0, result.stdout + result.stderr
    # The install builds out of the checkout: no build/ or aigov_client.egg-info left beside the sources.
    assert listing() == before
    assert not (PACKAGE / "build").exists() and not list(PACKAGE.glob("*.egg-info"))
    python = tmp_path / ".venv" / "bin" / "python"
    check = "import aigov_client, sys; assert 'site-packages' in aigov_client.__file__; print(aigov_client.Client().system.ping()['message'])"
    ran = subprocess.run([str(python), "-c", check], cwd=tmp_path, env=env_for(service), capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0 and ran.stdout.strip() == "pong", ran.stdout + ran.stderr
