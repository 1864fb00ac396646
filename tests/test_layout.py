"""The library's folders are its parts, the README's table points at files that exist, no
module imports, even lazily, one that imports it back, and none uses another's privates."""
import ast
import pathlib
import re
import subprocess
import sys

import pytest

import bloomedu

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_every_path_in_the_readme_table_exists():
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("| article step | module | lesson | test |"):]
    table = table[:table.index("\n\n")]
    paths = re.findall(r"`((?:bloomedu|tests|docs|tools|benchmarks|constraints)/[\w/.]+)`", table)
    assert len(paths) > 20
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert not missing
    lessons = re.findall(r"`(\d\d_[a-z_]+)`", table)
    assert lessons and all((ROOT / "notebooks" / f"{name}.ipynb").exists() for name in lessons)


def test_the_readme_table_names_every_module_and_test_file():
    """A newcomer finds any piece from the table in one step: every module of the library
    (or its folder) and every test file is named in it."""
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("| article step | module | lesson | test |"):]
    table = table[:table.index("\n\n")]
    named = set(re.findall(r"`((?:bloomedu|tests)/[\w/.]+)`", table))
    folders = tuple(name for name in named if name.endswith("/"))
    modules = [path.relative_to(ROOT).as_posix() for path in (ROOT / "bloomedu").rglob("*.py")
               if path.name not in ("__init__.py", "__main__.py") and "/data/" not in path.as_posix()]
    tests = [path.relative_to(ROOT).as_posix() for path in (ROOT / "tests").glob("test_*.py")]
    unnamed = [path for path in modules + tests
               if path not in named and not path.startswith(folders)
               and not path.split("/")[-1].startswith("_")]  # private helpers of a named module
    assert not unnamed


def test_import_bloomedu_loads_no_plotting():
    code = "import sys, bloomedu; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_no_module_is_left_at_the_top_but_the_command_line():
    top = sorted(p.name for p in (ROOT / "bloomedu").glob("*.py"))
    assert top == ["__init__.py", "__main__.py", "cli.py"]


def test_filters_get_a_keys_hashes_only_from_core_hashing():
    """BloomFilter and every variant take (h1, h2) from key_hashes or hashed_batches of
    bloomedu/core/hashing.py, which spread the step h2 (the empty key's h2 is 0): hashing a key
    directly for its positions would place some keys differently."""
    root = pathlib.Path(bloomedu.__file__).parent
    # The split-block filter is exempt: like Parquet's, it takes one 64-bit hash (h1) and no
    # step, and the empty key's eight bits are still eight different bits (one per word of
    # its block); tests/test_blocked.py checks its layout against Parquet's.
    own_layout = {"blocked.py", "blocked_kernels.py"}
    sources = [root / "core" / "filter.py",
               *sorted(p for p in (root / "variants").glob("*.py") if p.name not in own_layout)]
    for path in sources:
        text = path.read_text()
        assert not re.search(r"\bhash128\(|\bmurmur3_128_(uint64|list)\(", text), path


# --- no import circle ---------------------------------------------------------------------
def module_names() -> dict[str, pathlib.Path]:
    """Every module of the package by its dotted name (a package by its own name)."""
    root = pathlib.Path(bloomedu.__file__).parent
    names = {}
    for path in root.rglob("*.py"):
        parts = list(path.with_suffix("").relative_to(root.parent).parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def imported_modules(name: str, path: pathlib.Path, known: set[str]) -> set[str]:
    """The package's modules that ``name`` imports anywhere in its source, at the top or inside
    a function (a lazy import is an edge of the graph too: it only hides the circle)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level \
                else []
            target = ".".join(base + ([node.module] if node.module else []))
            found |= {f"{target}.{alias.name}" if f"{target}.{alias.name}" in known else target
                      for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return {module for module in found if module in known and module != name}


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The circles of an import graph: its strongly connected parts of two or more modules
    (Tarjan's algorithm, written with a stack so deep graphs need no recursion)."""
    index, low, on_stack, stack, cycles, counter = {}, {}, set(), [], [], 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                part = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    part.append(member)
                    if member == node:
                        break
                if len(part) > 1:
                    cycles.append(sorted(part))
    return cycles


def test_the_cycle_finder_finds_a_circle_and_only_a_circle():
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert import_cycles({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


def test_no_module_of_the_package_imports_one_that_imports_it_back():
    names = module_names()
    graph = {name: imported_modules(name, path, set(names)) for name, path in names.items()}
    assert sum(map(len, graph.values())) > 100  # the walk sees the imports
    assert graph["bloomedu.core.filter"] >= {"bloomedu.core.hashing", "bloomedu.core.bits"}
    assert import_cycles(graph) == []


# --- no module switches on the concrete filter classes ---------------------------------------
def _class_names_tested(tree: ast.AST) -> list[list[str]]:
    """For each isinstance/issubclass call and ``type(x) is C`` test: the class names tested."""
    def names(node) -> list[str]:
        if isinstance(node, ast.Tuple):
            return [name for element in node.elts for name in names(element)]
        if isinstance(node, ast.Attribute):
            return [node.attr]
        return [node.id] if isinstance(node, ast.Name) else []

    tested = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("isinstance", "issubclass") \
                and len(node.args) == 2:
            tested.append(names(node.args[1]))
        elif isinstance(node, ast.Compare) and isinstance(node.left, ast.Call) \
                and getattr(node.left.func, "id", None) == "type":
            tested.append([name for c in node.comparators for name in names(c)])
    return tested


def test_no_module_switches_on_the_concrete_filter_classes():
    """A module may check that an argument is of its own kind (a BloomFilter to combine with),
    never branch on which of several filters it was given: each structure answers for itself
    (steps/sequential.py asks segment_writes, bloomedu/core/segments.py)."""
    import conformance_support
    filter_names = {cls.__name__ for cls in conformance_support.discover()}
    switching = {}
    for name, path in module_names().items():
        tree = ast.parse(path.read_text())
        own = {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
        foreign = {n for group in _class_names_tested(tree) for n in group
                   if n in filter_names and n not in own}
        if len(foreign) > 1:
            switching[name] = sorted(foreign)
    assert switching == {}


TEST_PLUMBING = ("example_arguments", "from_bytes_arguments", "memory_inserts", "room",
                 "KEY_KINDS", "BUILT_FROM_KEYS", "NEEDS", "FULL")


def filter_params():
    import conformance_support
    return [pytest.param(cls, id=cls.__qualname__) for cls in conformance_support.discover()]


def test_every_exported_filter_class_descends_from_the_one_base():
    """Every class a module exports (its ``__all__``) that looks like a filter, and every
    filter class of the package, takes :class:`bloomedu.core.contract.Filter` as its root."""
    import conformance_support
    from bloomedu.core.contract import Filter
    filters = conformance_support.discover()
    assert len(filters) > 20
    assert [cls.__qualname__ for cls in filters if not issubclass(cls, Filter)] == []


def test_the_library_holds_no_test_plumbing():
    from bloomedu.core import contract
    assert [name for name in (*TEST_PLUMBING, "filters", "_REGISTRY", "KINDS")
            if hasattr(contract, name)] == []


def pytest_generate_tests(metafunc):
    if metafunc.function.__name__ == "test_no_filter_class_has_test_plumbing_among_its_names":
        metafunc.parametrize("cls", filter_params())


def test_no_filter_class_has_test_plumbing_among_its_names(cls):
    """What the conformance suite needs to build a class lives in tests/filter_registry.py."""
    assert [name for name in TEST_PLUMBING if hasattr(cls, name)] == []


# --- no module uses another's privates -----------------------------------------------------
def _private(name: str) -> bool:
    """A leading underscore marks a private name; a dunder (``__name__``, ``__init__``) is not one."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_uses(source: str) -> list[str]:
    """Where ``source`` imports another module's private name (``from x import _name``) or
    reads or writes a private attribute of anything but ``self``, ``cls`` or ``super()``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            found += [f"{node.lineno}: from {'.' * node.level}{node.module or ''} import {alias.name}"
                      for alias in node.names if _private(alias.name)]
        elif isinstance(node, ast.Attribute) and _private(node.attr):
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                continue
            if isinstance(owner, ast.Call) and getattr(owner.func, "id", None) == "super":
                continue
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def test_private_uses_finds_imports_and_attributes_but_not_dunders_or_self():
    source = ("from .hashing import _bit_position, fmix64\n"
              "from . import _feedback\n"
              "def f(other):\n"
              "    other._lock, other.__class__, other.bits\n"
              "class A:\n"
              "    def g(self):\n"
              "        return self._x, type(self)._y, super()._z, A.__name__\n")
    assert private_uses(source) == ["1: from .hashing import _bit_position", "2: from . import _feedback",
                                    "4: other._lock", "7: type(self)._y"]


def test_the_sequential_loop_reads_no_private_field_of_a_structure():
    for path in (ROOT / "bloomedu" / "steps").glob("*.py"):
        assert private_uses(path.read_text()) == [], path.name


def test_no_module_imports_another_modules_private_name_or_reads_another_objects_private():
    """A module uses what another module or object offers publicly: a name shared between
    modules is public (a private one is a promise to nobody), and an object's private fields
    are read only by its own methods (``self``, ``cls``, ``super()``)."""
    found = {name: uses for name, path in sorted(module_names().items())
             if (uses := private_uses(path.read_text()))}
    assert found == {}


def test_tests_import_their_helpers_by_module_name_never_through_a_tests_package():
    # pyfusefilter (the bench extra) installs a top-level package named `tests` into
    # site-packages, and a regular package always wins over this folder, which has no
    # __init__.py: `from tests.x import ...` then fails after `make bench`. pytest puts this
    # folder on sys.path, so helpers are imported by their own names.
    found = []
    for path in sorted((ROOT / "tests").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            found += [f"{path.name}:{node.lineno} {name}" for name in names
                      if name == "tests" or name.startswith("tests.")]
    assert not found, found


# --- the reference a student reads, and the kernels beside it ---------------------------------
def test_kernels_take_plain_arrays_and_import_nothing_of_the_filters():
    """A kernel (bloomedu/kernels/) is fed arrays and gives bits or answers back: it imports no
    other part of the library (only numpy, mmh3, the standard library and other kernels), so it
    cannot reach into a filter."""
    root = pathlib.Path(bloomedu.__file__).parent / "kernels"
    for path in sorted(root.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                assert node.level == 1, (path.name, node.module)  # from .murmur, never ..core
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [alias.name for alias in node.names] if isinstance(node, ast.Import) \
                    else [node.module]
                assert not any(name.startswith("bloomedu") for name in names), (path.name, names)


def test_the_filter_a_student_reads_is_two_modules_of_at_most_1200_lines():
    """add, in, add_many and contains_many go through core/filter.py (the algorithm, the
    position formula for one key and for an array) and core/hashing.py (a key's hashes, and
    whether a batch's chunks can still fail: ``cannot_fail``); every bulk method hands plain
    arrays to a kernel and calls nothing else of the library."""
    core = pathlib.Path(bloomedu.__file__).parent / "core"
    lines = sum(len((core / name).read_text().splitlines()) for name in ("filter.py", "hashing.py"))
    assert lines <= 1200, lines
    tree = ast.parse((core / "filter.py").read_text())
    bloom = next(node for node in tree.body if isinstance(node, ast.ClassDef)
                 and node.name == "BloomFilter")
    for method in bloom.body:
        if isinstance(method, ast.FunctionDef) and method.name in ("add_many", "add_many_new",
                                                                   "contains_many"):
            calls = {ast.unparse(node.func) for node in ast.walk(method)
                     if isinstance(node, ast.Call)}
            assert calls <= {"self._hashed", "cannot_fail", "backend.bloom", "kernels.insert",
                             "kernels.add_new", "kernels.contains"}, (method.name, calls)


def test_bloom_filters_public_names_are_what_a_user_calls():
    """The names a student sees on BloomFilter (dir, the API page): adding, asking, sizing,
    bytes, set operations and estimates; nothing that only the tests or another module's
    machinery call."""
    from bloomedu import BloomFilter
    public = sorted(name for name in dir(BloomFilter) if not name.startswith("_"))
    assert public == ["HASHING", "add", "add_many", "add_many_new", "approximate_count",
                      "bit_indices", "bits_set", "bits_snapshot", "contains_many", "copy",
                      "current_false_positive_rate", "fill_ratio", "from_bytes",
                      "from_capacity", "nbytes", "to_bytes"]
