"""environment.yml (the conda route) and pyproject.toml (the pip route) list the same packages."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~ \[;]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _pyproject_section(name: str) -> str:
    # tomllib is 3.11+ and the floor is 3.10: the two sections we read are plain enough for a regex.
    text = (ROOT / "pyproject.toml").read_text()
    return re.search(rf"^\[{re.escape(name)}\]\n(.*?)(?=^\[|\Z)", text, re.S | re.M).group(1)


def _pyproject_requirements() -> dict[str, str]:
    deps = re.search(r"^dependencies = \[(.*?)\]", _pyproject_section("project"), re.S | re.M).group(1)
    requirements = re.findall(r'"([^"]+)"', deps + _pyproject_section("project.optional-dependencies"))
    return {_name(r): r.replace(" ", "") for r in requirements if not r.startswith("bloomedu")}


def _environment_requirements() -> dict[str, str]:
    found = {}
    text = (ROOT / "environment.yml").read_text()
    for line in text.split("dependencies:", 1)[1].splitlines():
        item = re.match(r"^\s*-\s+([A-Za-z0-9_.\-]+[^#]*?)\s*(#.*)?$", line)
        if item and item.group(1) not in ("pip", "pip:", "-e .") and not item.group(1).startswith("-e"):
            found[_name(item.group(1))] = item.group(1).replace(" ", "")
    found.pop("python", None)
    return found


def test_same_packages_and_bounds():
    assert _environment_requirements() == _pyproject_requirements()


def test_environment_installs_the_project_itself():
    assert re.search(r"^\s*-\s+-e \.\s*$", (ROOT / "environment.yml").read_text(), re.M)


def test_python_floor_agrees():
    assert re.search(r'^requires-python = ">=3\.10"$', _pyproject_section("project"), re.M)
    assert re.search(r"^\s*-\s+python>=3\.10\s*$", (ROOT / "environment.yml").read_text(), re.M)
