"""Which memory paths git ignores (`git check-ignore`).

A journal entry git ignores is folded by the distiller on this machine but
never committed: every clone then misses it, and a clone's `check` fails on
distilled facts it cannot rebuild. So the writers ask first.
"""

from __future__ import annotations

from journal_mem.errors import GitError
from journal_mem.gitops import gitcore


def ignored(root: str, paths: list[str]) -> dict[str, str]:
    """{repo-relative path: the rule that ignores it, as `source:line: pattern`} for each
    of `paths` git would ignore if the file were created in the checkout at `root`.

    Paths git tracks already are not reported (git does not ignore them). The rules are
    tried first without the index (`--no-index`, which reports tracked paths too): it
    finds no path in nearly every repository, and reading the index of 100k journal
    files cost 130 ms a distill. Only the paths it found are asked again with it.
    """
    maybe = _check(root, paths, ["--no-index"]) if paths else {}
    return _check(root, sorted(maybe), []) if maybe else {}


def _check(root: str, paths: list[str], extra: list[str]) -> dict[str, str]:
    stdin = b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)
    res = gitcore.run(["check-ignore", *extra, "-v", "-z", "--stdin"], root, clean=True,
                      check=False, stdin=stdin)
    if res.returncode not in (0, 1):
        err = res.stderr.decode("utf-8", "replace").strip()
        raise GitError(f"git check-ignore failed in {root}: {err}")
    fields = [f.decode("utf-8", "surrogateescape") for f in res.stdout.split(b"\0")]
    found = {}
    for source, line, pattern, path in zip(fields[0::4], fields[1::4], fields[2::4],
                                           fields[3::4], strict=False):
        if pattern.startswith("!"):
            continue  # the last matching rule un-ignores it
        found[path] = f"{source}:{line}: {pattern}"
    return found
