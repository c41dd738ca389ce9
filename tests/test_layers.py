"""The package layout is the architecture: a small core that imports no feature,
a package per feature, one-way imports and no cycles, click only in the cli
package, imports at the top except the few listed in `LAZY` (each with its reason), and
hot paths on the standard library.

Layers (docs/DESIGN.md, "Layout"), lowest first:

    0  errors, names, fsutil, hashes, boundary, progress,      leaves
       tuples, resources/
    1  settings, schema, gitops/                               configuration; every git call
    2  layout                                                  where memory lives on disk
    3  journal/                                                entries and the store
    4  repo                                                    the composition root
    5  distill/ wake/ guard/ recall/ lessons/ importers/       features: each uses another
       loop/ team/ demo/ setup/ consolidate/ mcpserver/       only through public names
    6  cli/, main, api, __main__                               entry points
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO_ROOT, base_env, jmem
from hotpaths import PROBE, loaded, recorded, repository, started

PACKAGE = REPO_ROOT / "journal_mem"
RANK = {"errors": 0, "names": 0, "fsutil": 0, "hashes": 0, "jsonc": 0, "boundary": 0, "progress": 0,
        "resources": 0, "options": 0, "tuples": 0,
        "__init__": 0, "settings": 1, "schema": 1, "gitops": 1, "layout": 2, "journal": 3,
        "repo": 4, "cli": 6, "main": 6, "api": 6, "__main__": 6}
FEATURES = {"distill", "wake", "guard", "recall", "lessons", "importers", "loop", "team",
            "demo", "setup", "consolidate", "mcpserver", "intake", "capture"}
THIRD_PARTY = {"click", "pydantic", "yaml", "git", "frontmatter", "watchdog", "markdown_it",
               "tqdm", "rich", "playwright", "mcp"}
# Parsing an entry that changed since the last hook reads its YAML frontmatter.
COLD_ALLOWED = {"yaml"}


def modules() -> dict[str, Path]:
    """Dotted name (without `journal_mem.`) → file, for every module of the package."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def rank(module: str) -> int:
    head = module.split(".")[0]
    return 5 if head in FEATURES else RANK[head]


def imported(path: Path, *, top_level_only: bool = False) -> set[str]:
    """Absolute names this file imports (`journal_mem.x.y` or a third-party root)."""
    tree = ast.parse(path.read_text())
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            assert node.level == 0, f"{path}: relative import"
            found.add(node.module)
            if node.module.startswith("journal_mem"):
                found |= {f"{node.module}.{a.name}" for a in node.names}
    return found


def internal(path: Path, known: dict[str, Path], **kw: bool) -> set[str]:
    """The package modules a file imports (names without `journal_mem.`)."""
    out = set()
    for name in imported(path, **kw):
        if name.startswith("journal_mem."):
            short = name.removeprefix("journal_mem.")
            if short in known:
                out.add(short)
    return out


def test_only_cli_imports_click() -> None:
    for name, path in modules().items():
        if name.split(".")[0] != "cli":
            roots = {m.split(".")[0] for m in imported(path)}
            assert "click" not in roots, f"{name} imports click"


def test_layers_import_only_downward() -> None:
    known = modules()
    wrong = []
    for name, path in known.items():
        for target in internal(path, known):
            if target.split(".")[0] == name.split(".")[0]:
                continue  # inside one subpackage
            if rank(target) > rank(name):
                wrong.append(f"{name} (layer {rank(name)}) imports {target} (layer {rank(target)})")
    assert not wrong, "\n".join(sorted(wrong))


def test_no_import_cycles() -> None:
    known = modules()
    graph = {name: internal(path, known) - {name} for name, path in known.items()}
    graph = {n: {t for t in ts if not n.startswith(t + ".") and t != n.rpartition(".")[0]}
             for n, ts in graph.items()}  # a module importing its own package is not a cycle
    state: dict[str, int] = {}
    cycles: list[str] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join([*stack[stack.index(nxt):], nxt]))
            elif nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for start in sorted(graph):
        if start not in state:
            visit(start, [start])
    assert not cycles, "\n".join(cycles)


def test_features_use_each_other_only_through_public_names() -> None:
    known = modules()
    wrong = []
    for name, path in known.items():
        head = name.split(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.ImportFrom) and node.module
                    and node.module.startswith("journal_mem.")):
                continue
            target = node.module.removeprefix("journal_mem.").split(".")[0]
            if target == head or target not in FEATURES:
                continue
            wrong += [f"{name} imports {node.module}.{a.name}" for a in node.names
                      if a.name.startswith("_")]
    assert not wrong, "\n".join(wrong)


def test_features_form_no_cycle() -> None:
    known = modules()
    graph: dict[str, set[str]] = {f: set() for f in FEATURES}
    for name, path in known.items():
        head = name.split(".")[0]
        if head in FEATURES:
            graph[head] |= {t.split(".")[0] for t in internal(path, known)} & FEATURES - {head}
    order: list[str] = []
    pending = dict(graph)
    while pending:
        free = [f for f, deps in pending.items() if not deps & set(pending)]
        assert free, f"features import each other in a cycle: {pending}"
        order += sorted(free)
        for f in free:
            del pending[f]


# Every import inside a function, in one place: (module, what it imports, why). "hot":
# a module some hot path loads imports it only on the branch that needs it (measured by
# `hotpaths.loaded`); "heavy": a library only one command needs (watchdog, the mcp SDK,
# markdown-it, pydantic, tqdm, a browser); "dispatch": the entry point loads only the
# command that runs; "crash": only when something failed; "rare": what a command needs
# only for input few runs meet (a distill that finds memory to adopt). Anything else
# goes at the top.
LAZY: list[tuple[str, str, str]] = [
    ("boundary", "tempfile", "crash"), ("boundary", "traceback", "crash"),
    ("capture.filing", "journal_mem.distill.adopt", "rare"),
    ("capture.filing", "journal_mem.distill.handedit.SOURCE", "rare"),
    ("capture.hook", "journal_mem.capture.filing.file_source", "hot"),
    ("capture.hook", "journal_mem.layout.is_native", "hot"),
    ("capture.hook", "journal_mem.names.MEMORY_MD", "hot"),
    ("capture.hook", "journal_mem.repo.open_context", "hot"),
    ("cli.distilling", "journal_mem.distill.watch", "heavy"),
    ("cli.reporting", "webbrowser", "heavy"),
    ("distill.background", "journal_mem.distill.command.fast_main", "dispatch"),
    ("distill.distiller", "journal_mem.distill.adopt.adopt_found", "rare"),
    ("mcpserver.handshake", "journal_mem.mcpserver.server.serve", "heavy"),
    ("hashes", "hashlib", "hot"),  # a bulk hash (a distill's), or no C hash modules
    ("gitops.gitcore", "select", "hot"),  # a captured stderr beside stdout (`run`)
    ("gitops.gitcore", "subprocess", "hot"),
    ("gitops.memgit", "threading", "hot"),  # a distill's commit; `write` reads memgit too
    ("gitops.logcache", "pickle", "hot"), ("gitops.logcache", "pickle", "hot"),
    ("guard.fast", "journal_mem.guard.rules.judge", "hot"),
    ("importers.markdown", "markdown_it", "heavy"),
    ("journal.render", "markdown_it", "heavy"),
    ("intake.pipeline", "difflib", "hot"),
    ("journal.cache", "datetime", "hot"),
    ("journal.cache", "journal_mem.journal.lazy", "hot"),
    ("journal.cache", "pickle", "hot"), ("journal.cache", "pickle", "hot"),
    ("journal.cache", "threading", "hot"),
    ("journal.foldstate", "datetime", "hot"),
    ("jsonc", "json", "rare"),  # what the C codec does not do: an error, an indent
    ("journal.forked", "pickle", "hot"), ("journal.forked", "pickle", "hot"),
    ("journal.entry", "difflib", "hot"),
    ("journal.entry", "journal_mem.journal.secrets.scan", "hot"),
    ("journal.entry", "unicodedata", "hot"),
    ("journal.frontmatter", "yaml", "heavy"),
    ("journal.validate", "journal_mem.journal.entry.parse", "hot"),
    ("journal.validate", "journal_mem.journal.entry.render", "hot"),
    ("journal.validate", "journal_mem.journal.secrets.scan", "hot"),
    ("layout", "tomllib", "hot"),
    ("lessons.write", "journal_mem.lessons.related.describe", "hot"),
    ("lessons.write", "journal_mem.lessons.related.key_clash", "hot"),
    ("lessons.write", "journal_mem.lessons.related.related", "hot"),
    ("main", "journal_mem.cli.run", "dispatch"), ("main", "journal_mem.wake.hooks", "dispatch"),
    ("names", "unicodedata", "hot"),
    ("progress", "tqdm", "heavy"),
    ("recall.index", "journal_mem.recall.refresh", "hot"),
    ("recall.query", "json", "hot"),
    ("repo", "journal_mem.gitops.lineage.read", "hot"),
    ("repo", "journal_mem.gitops.memgit.ref_checker", "hot"),
    ("repo", "journal_mem.journal.citations.judge", "hot"),
    ("repo", "journal_mem.journal.fold.fold", "hot"),
    ("repo", "journal_mem.schema.load", "hot"),
    ("resources", "importlib.resources", "heavy"),
    ("schema", "annotated_types", "heavy"), ("schema", "pydantic", "heavy"),
    ("schema", "typing", "heavy"),  # with pydantic: the snapshot is read without it
    ("settings", "tomllib", "hot"),
    ("wake.held", "journal_mem.wake.native", "hot"),
    ("wake.hooks", "journal_mem.names.is_name", "hot"),
    ("wake.hooks", "journal_mem.repo.light_context", "hot"),
    ("wake.hooks", "journal_mem.wake.claude_files", "hot"),
    ("wake.hooks", "journal_mem.wake.fork", "hot"), ("wake.hooks", "journal_mem.wake.fork", "hot"),
    ("wake.hooks", "journal_mem.wake.held", "hot"),
    ("wake.hooks", "journal_mem.wake.held.Held", "hot"),
    ("wake.hooks", "journal_mem.wake.pack", "hot"), ("wake.hooks", "journal_mem.wake.pack", "hot"),
    ("wake.hooks", "journal_mem.wake.remind.decide", "hot"),
    ("wake.pack", "journal_mem.recall.query.recall", "hot"),
    ("wake.sessions", "datetime", "hot"), ("wake.sessions", "datetime", "hot"),
    ("wake.sessions", "re", "hot"),
]
MAX_LAZY = 75  # 63: a distill without click, its fold off the post-commit hook (~25 ms);
# 64: a distill imports what adopts memory only when it finds some (~45 ms); 65-67: the
# wake-up hook without `pickle` or `datetime` (~4 ms of ~35: its views are marshal);
# 68-69: `write` without `pickle` (the log cache's, ~2 ms); 70: the hooks' caches
# without `threading`, which only a distill's held cache writes use; 71: the live hooks
# without `re` and `json` (~8 ms of a ~20 ms start: `jsonc`, `sessions.regex`); 72-73: a
# captured native memory file without the distiller's modules (a hand edit's: ~40 ms);
# 74-75: `write` without `subprocess` and `threading` (~4 ms of CPU: `run` by posix_spawn)


def _function_level_imports() -> list[tuple[str, str]]:
    """(module, the first name it imports) of every import inside a function or class."""
    found = []
    for name, path in modules().items():
        tree = ast.parse(path.read_text())
        top = {id(n) for stmt in tree.body if isinstance(stmt, (ast.If, ast.Try))
               for n in ast.walk(stmt)}  # `if TYPE_CHECKING:`, `try: import fcntl`
        top |= {id(n) for n in tree.body}
        for n in ast.walk(tree):
            if isinstance(n, ast.Import) and id(n) not in top:
                found.append((name, n.names[0].name))
            elif isinstance(n, ast.ImportFrom) and id(n) not in top:
                mod = n.module or ""
                first = f"{mod}.{n.names[0].name}" if mod.startswith("journal_mem") else mod
                found.append((name, first))
    return sorted(found)


@pytest.fixture(scope="module")
def hot(tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[str]]:
    return loaded(tmp_path_factory.mktemp("hot"))


def test_hot_paths_stay_on_the_standard_library(hot: dict[str, set[str]]) -> None:
    for path, mods in hot.items():
        roots = {m.split(".")[0] for m in mods}
        allowed = COLD_ALLOWED if path.endswith("(cold)") else set()
        assert not (roots & THIRD_PARTY) - allowed, f"{path}: {sorted(roots & THIRD_PARTY)}"
        assert "pydantic" not in roots and "click" not in roots, path


# What a warm hot path never imports: `dataclasses` (with the `inspect` it imports, ~11 ms
# a start) and `typing` (with `contextlib` and `warnings`, ~3 ms). The entry and the fold
# are written out by hand, and named tuples are made without `typing` (`tuples.py`).
SLOW_STDLIB = {"dataclasses", "inspect", "typing"}


def test_warm_hot_paths_import_no_dataclasses_or_typing(hot: dict[str, set[str]]) -> None:
    for path, mods in hot.items():
        if path.endswith("(warm)"):
            slow = mods & SLOW_STDLIB
            assert not slow, f"{path}: {sorted(slow)}"
    for path in ("write (warm)", "write (cold)"):
        assert not hot[path] & SLOW_STDLIB, sorted(hot[path] & SLOW_STDLIB)


def test_write_imports_no_subprocess_or_ast(hot: dict[str, set[str]], tmp_path: Path) -> None:
    """`write` runs its one git process (`check-ignore`) by posix_spawn (`gitcore.run`) and
    reads the recall index's signature as plain lines: `subprocess` (with `threading`,
    `signal`, `selectors`) and `ast` cost it ~6.5 ms of CPU, about a seventh. Nor does
    it import `contextlib` (the distill's commit code suppresses errors by hand),
    `base64` (a Basic credential is decoded by `binascii`) or `json` (its JSON is
    `jsonc`'s): ~1.5 ms."""
    before = started(tmp_path)  # a dev install's import finder loads `contextlib`
    for path in ("write (warm)", "write (cold)"):
        slow = (hot[path] - before) & {"subprocess", "threading", "ast", "contextlib",
                                       "base64", "json"}
        assert not slow, f"{path}: {sorted(slow)}"


def test_a_distill_and_a_capture_import_no_dataclasses(tmp_path: Path) -> None:
    """Beyond the hot paths: a distill (at every 10 lessons) and the capture of a native
    memory write (`write`: above) build their records as plain classes and named tuples
    (`Entry`, `Fold`, `Rendered`, `Outcome`, the importers' files): `dataclasses` with the
    `inspect` it imports cost each ~11 ms, and each dataclass ~1 ms to make. The capture
    imports no `typing` either (~3 ms with `contextlib` and `warnings`)."""
    main = repository(tmp_path)
    for n in range(2):
        assert jmem(main, "write", "--agent", "api", "--topic", "testing", "--title",
                    f"A lesson the distill folds, number {n}", stdin="body\n").returncode == 0
    native = main / ".claude" / "agent-memory" / "api" / "feedback_probe.md"
    capture = {"hook_event_name": "PostToolUse", "session_id": "s1", "cwd": str(main),
               "tool_name": "Write", "tool_input": {"file_path": str(native)}}
    for argv, stdin, said in ((["distill"], "", "distilled"),
                              (["wake", "--hook", "claude"], json.dumps(capture), "filed")):
        if argv[0] == "wake":  # written after the distill: it would adopt it (rare path)
            native.write_text("---\nname: probe-note\ndescription: A note\nmetadata:\n"
                              "  type: feedback\n---\n\nThe probe's note.\n")
        dump = tmp_path / "modules.marshal"
        proc = subprocess.run([sys.executable, "-c", PROBE, str(dump), "jmem", *argv],
                              cwd=main, env=base_env(), input=stdin, text=True,
                              capture_output=True, check=False)
        assert proc.returncode == 0 and said in proc.stdout, proc.stdout + proc.stderr
        mods = recorded(dump)
        assert "journal_mem.distill.distiller" in mods or argv[0] == "wake", sorted(mods)
        assert not mods & {"dataclasses", "inspect"}, (argv, sorted(mods & {"dataclasses"}))
        if argv[0] == "wake":  # the capture's records are named tuples without `typing`
            assert "typing" not in mods, sorted(mods)


def test_hot_paths_load_no_openssl_hashes(hot: dict[str, set[str]]) -> None:
    """`hashlib` loads OpenSSL (~3 ms a start): every hot path, `write` and a cold cache
    included, hashes through `journal_mem.hashes` (CPython's C modules) instead."""
    for path, mods in hot.items():
        openssl = mods & {"hashlib", "_hashlib"}
        assert not openssl, f"{path}: {sorted(openssl)}"


def test_warm_hooks_load_no_pickle_or_datetime(hot: dict[str, set[str]]) -> None:
    """The hooks' pending views are plain values kept with `marshal` (`cache.Cache`, not
    of entries), their `created` an ISO text and a POSIX time: a warm hook with a
    lesson pending imports neither `pickle` nor `datetime` (~4 ms a start); `write` no
    `pickle` (~2 ms)."""
    for path, mods in hot.items():
        if path.endswith("(warm)") and not path.startswith(("write", "recall", "hook")):
            slow = mods & {"pickle", "datetime"}
            assert not slow, f"{path}: {sorted(slow)}"
    # `write` builds an entry (a datetime), but reads no pickled cache (`gitops.logcache`)
    assert "pickle" not in hot["write (warm)"], sorted(hot["write (warm)"])


def test_live_hooks_load_no_re_or_json(hot: dict[str, set[str]], tmp_path: Path) -> None:
    """The live check (every prompt, every tool call) reads and writes JSON with json's C
    codec (`jsonc`) and matches a pattern only when its text can hold it: `re`, `enum`
    and `json` together are ~8 ms of a start whose own work is under 1 ms."""
    before = started(tmp_path)
    for path in ("UserPromptSubmit (warm)", "PostToolUse (warm)"):
        slow = (hot[path] - before) & {"re", "enum", "json"}
        assert not slow, f"{path}: {sorted(slow)}"


def test_imports_are_at_the_top_except_the_listed_ones(hot: dict[str, set[str]]) -> None:
    """Every function-level import is in `LAZY`, with its reason; a "hot" one sits in a
    module some hot path really loads (so the listing cannot go stale in that way)."""
    assert len(LAZY) <= MAX_LAZY
    listed = sorted((module, what) for module, what, _ in LAZY)
    found = _function_level_imports()
    assert found == listed, (
        "imports inside functions differ from LAZY in tests/test_layers.py:\n"
        f"  not listed: {sorted(set(found) - set(listed))}\n"
        f"  listed, not found: {sorted(set(listed) - set(found))}")
    hot_modules = {m.removeprefix("journal_mem.") for mods in hot.values() for m in mods}
    cold = sorted({module for module, _, why in LAZY if why == "hot"} - hot_modules)
    assert not cold, f"listed as hot but no hot path loads them: {cold}"


def test_hot_modules_import_only_the_standard_library_at_top_level(
        hot: dict[str, set[str]]) -> None:
    known = modules()
    for mods in hot.values():
        for module in mods:
            short = module.removeprefix("journal_mem.")
            if module.startswith("journal_mem.") and short in known:
                roots = {m.split(".")[0] for m in imported(known[short], top_level_only=True)}
                assert not roots & THIRD_PARTY, short


def test_no_class_name_is_defined_twice() -> None:
    """One class per concept: two classes of one name are two copies of an idea."""
    seen: dict[str, list[str]] = {}
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                seen.setdefault(node.name, []).append(name)
    twice = {k: v for k, v in seen.items() if len(v) > 1}
    assert not twice, twice


def test_the_layout_is_built_in_the_composition_root_only() -> None:
    """Every feature gets its layout from `repo.Context` (the one cheap context)."""
    built = sorted(name for name, path in modules().items()
                   for node in ast.walk(ast.parse(path.read_text()))
                   if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                   and node.func.id == "Layout")
    assert built == ["repo"], built
