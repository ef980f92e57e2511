"""Each package is used through its face: a private module ``doikit.X._y`` is imported only
by modules inside ``doikit.X`` (issue 30, point 6). Read from the source with :mod:`ast`, so
imports under ``TYPE_CHECKING`` and inside functions count too."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"

# Imports that break the rule today, each with why it is not mended yet (none now). An entry
# that is no longer needed fails the test too, so this list only shrinks.
EXCEPTIONS: dict[str, tuple[frozenset[str], str]] = {}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {
    _module_name(path): path
    for path in sorted((SRC / "doikit").rglob("*.py"))
    if "_c" not in path.relative_to(SRC).parts
}


def _is_module(name: str) -> bool:
    return name in MODULES


def _imported_modules(module: str, tree: ast.Module) -> set[str]:
    """The doikit modules *module* imports: ``import a.b``, ``from a import b`` (module
    ``a``, and ``a.b`` when that is a module), relative forms resolved."""
    package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, *([base] if base else [])])
            out.add(base)
            out.update(f"{base}.{alias.name}" for alias in node.names)
    return {name for name in out if _is_module(name)}


def _owner(imported: str) -> str | None:
    """The package a private module is private to: ``doikit.X`` for ``doikit.X._y`` (the
    innermost, for a private module inside a private package); ``None`` for a public one."""
    parts = imported.split(".")
    for i in range(len(parts) - 1, 0, -1):
        if parts[i].startswith("_") and not parts[i].startswith("__"):
            return ".".join(parts[:i])
    return None


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


@functools.cache
def _breaches() -> dict[str, set[str]]:
    """The private modules each module imports from outside its package."""
    found: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for imported in _imported_modules(module, tree):
            owner = _owner(imported)
            if owner is not None and not _inside(module, owner):
                found.setdefault(module, set()).add(imported)
    return found


def test_the_walk_sees_the_packages() -> None:
    # (A walk that found nothing would pass the test below.)
    assert {"doikit.handle._values", "doikit.server._app", "doikit.cli._directory"} <= set(MODULES)
    assert _owner("doikit.handle._values") == "doikit.handle"
    assert _owner("doikit._extract._scan") == "doikit._extract"
    assert _owner("doikit.handle.resolution") is None


def test_private_modules_are_imported_only_inside_their_package() -> None:
    breaches = _breaches()
    unexpected = {
        module: sorted(imported - EXCEPTIONS.get(module, (frozenset(), ""))[0])
        for module, imported in breaches.items()
    }
    assert {module: names for module, names in unexpected.items() if names} == {}


def test_every_exception_is_still_needed() -> None:
    breaches = _breaches()
    for module, (allowed, reason) in EXCEPTIONS.items():
        assert reason, module
        assert breaches.get(module, set()) == allowed, module


def test_no_module_outside_handle_reads_its_values_module() -> None:
    # The rule above, for the module the issue names: its names come from doikit.handle.
    users = {m for m, imported in _breaches().items() if "doikit.handle._values" in imported}
    assert users <= set(EXCEPTIONS)
