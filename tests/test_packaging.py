"""What the project promises to install, kept in one story.

environment.yml (the conda route) and pyproject.toml (the pip route) list the same packages;
constraints/oldest.txt pins each package that ``pip install -e '.[dev]'`` asks for at exactly its
declared lower bound (``make test`` builds ``.venv-oldest`` from it and runs every test there too);
the environment a test runs in holds at least those bounds, and exactly the pins where
``BLOOMEDU_CONSTRAINTS`` names the file it was built from.
"""

import ast
import os
import re
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
from packaging.version import Version  # pytest's own dependency: in every environment that runs this

ROOT = Path(__file__).resolve().parent.parent
CONSTRAINTS = ROOT / "constraints" / "oldest.txt"


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~ \[;]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _pyproject_section(name: str) -> str:
    # tomllib is 3.11+ and the floor is 3.10: the two sections we read are plain enough for a regex.
    text = (ROOT / "pyproject.toml").read_text()
    return re.search(rf"^\[{re.escape(name)}\]\n(.*?)(?=^\[|\Z)", text, re.S | re.M).group(1)


def _pyproject_requirements() -> dict[str, str]:
    """Every requirement of pyproject.toml but the instructor's kit: environment.yml is the
    students' conda route, and nbgrader in it would show its menus in their JupyterLab."""
    deps = re.search(r"^dependencies = \[(.*?)\]", _pyproject_section("project"), re.S | re.M).group(1)
    extras = re.sub(r"^instructor = \[.*?\]", "", _pyproject_section("project.optional-dependencies"),
                    flags=re.S | re.M)
    requirements = re.findall(r'"([^"]+)"', deps + extras)
    return {_name(r): r.replace(" ", "") for r in requirements if not r.startswith("bloomedu")}


def _dev_requirements() -> dict[str, str]:
    """What ``pip install -e '.[dev]'`` asks for: the runtime dependencies and the extras dev names."""
    extras = _pyproject_section("project.optional-dependencies")
    wanted = re.search(r'^dev = \[\s*"bloomedu\[([a-z,]+)\]",?\s*\]', extras, re.M).group(1)
    text = re.search(r"^dependencies = \[(.*?)\]", _pyproject_section("project"), re.S | re.M).group(1)
    for extra in wanted.split(","):
        text += re.search(rf"^{extra} = \[(.*?)\]", extras, re.S | re.M).group(1)
    return {_name(r): r.replace(" ", "") for r in re.findall(r'"([^"]+)"', text)}


def _lower_bound(requirement: str) -> str:
    bound = re.fullmatch(r"[A-Za-z0-9_.\-]+>=([0-9][0-9.]*)", requirement)
    assert bound, f"{requirement!r}: every requirement is one lower bound, name>=version"
    return bound.group(1)


def _pins(path: Path = CONSTRAINTS) -> dict[str, str]:
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            pin = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([0-9][0-9.]*)", line)
            assert pin, f"{path.name}: {line!r} is not a name==version pin"
            assert _name(pin.group(1)) not in pins, f"{path.name}: {line!r} pinned twice"
            pins[_name(pin.group(1))] = pin.group(2)
    return pins


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


# Python 3.10 is promised but not installable here (no 3.10 in Debian 12's apt, and the PyPI and
# npm packages that offer one download it from elsewhere): so its grammar and the standard library
# names that arrived later are checked in every source file instead.
NEWER_THAN_310 = {"tomllib", "wsgiref.types", "asyncio.TaskGroup", "asyncio.timeout", "contextlib.chdir",
                  "datetime.UTC", "enum.StrEnum", "enum.verify", "hashlib.file_digest", "math.cbrt",
                  "math.exp2", "operator.call", "typing.Self", "typing.LiteralString", "typing.Never",
                  "typing.assert_never", "typing.assert_type", "typing.reveal_type",
                  "typing.TypeVarTuple", "typing.Unpack", "typing.Required", "typing.NotRequired",
                  "typing.dataclass_transform", "typing.override", "itertools.batched",
                  "ExceptionGroup", "BaseExceptionGroup"}
SOURCES = sorted(p for folder in ("bloomedu", "tests", "tools", "benchmarks", "notebooks")
                 for p in (ROOT / folder).rglob("*.py")) + [ROOT / "conftest.py"]


def _names_used(tree: ast.AST) -> set[str]:
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            used.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            used.add(node.module)
            used.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            used.add(f"{node.value.id}.{node.attr}")
        elif isinstance(node, ast.Name):
            used.add(node.id)
    return used


def test_sources_keep_to_python_3_10():
    newer = {}
    for path in SOURCES:  # a SyntaxError here names the file and the line
        found = _names_used(ast.parse(path.read_text(), str(path), feature_version=(3, 10)))
        if found & NEWER_THAN_310:
            newer[str(path.relative_to(ROOT))] = sorted(found & NEWER_THAN_310)
    assert len(SOURCES) > 50 and not newer, "requires-python says >=3.10"


def test_python_3_10_check_sees_newer_names():
    assert _names_used(ast.parse("import tomllib\nfrom typing import Self\nx = enum.StrEnum")) \
        >= {"tomllib", "typing.Self", "enum.StrEnum"}
    with pytest.raises(SyntaxError):
        ast.parse("try:\n    pass\nexcept* ValueError:\n    pass\n", feature_version=(3, 10))


def test_python_floor_agrees():
    assert re.search(r'^requires-python = ">=3\.10"$', _pyproject_section("project"), re.M)
    assert re.search(r"^\s*-\s+python>=3\.10\s*$", (ROOT / "environment.yml").read_text(), re.M)


def test_oldest_constraints_pin_exactly_the_declared_lower_bounds():
    bounds = {name: _lower_bound(r) for name, r in _dev_requirements().items()}
    pins = _pins()
    assert sorted(pins) == sorted(bounds), "constraints/oldest.txt pins what pyproject.toml lists"
    assert {n: Version(v) for n, v in pins.items()} == {n: Version(v) for n, v in bounds.items()}


def test_runtime_bounds_keep_numpy_1_and_matplotlib_3_7_era_installs():
    # students run older Anaconda installs: the floor stays below numpy 2 and its NEP 50 casting
    bounds = {name: Version(_lower_bound(r)) for name, r in _dev_requirements().items()}
    assert bounds["numpy"] <= Version("1.26")
    assert bounds["matplotlib"] <= Version("3.8")


def test_lower_bound_parsing_refuses_what_pip_would_read_differently(tmp_path):
    with pytest.raises(AssertionError, match="one lower bound"):
        _lower_bound("numpy>=1.24,<3")
    (tmp_path / "pins.txt").write_text("numpy==1.24.0  # the floor\nnumpy>=1.24\n")
    with pytest.raises(AssertionError, match="not a name==version pin"):
        _pins(tmp_path / "pins.txt")


@pytest.mark.parametrize("name", sorted(_pins()))
def test_installed_version_meets_the_promise(name):
    """Every run checks its own environment: at least the bound, and exactly the pin in .venv-oldest."""
    try:
        installed = Version(version(name))
    except PackageNotFoundError:
        pytest.fail(f"{name} is not installed: build the environment with `make env`")
    assert installed >= Version(_pins()[name])
    built_from = os.environ.get("BLOOMEDU_CONSTRAINTS")
    if built_from:
        assert installed == Version(_pins(ROOT / built_from)[name])
