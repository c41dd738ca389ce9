"""What git says about a checkout of journal-mem's own code: where `init --ci github`
may pin the CI job's install (is the running code committed, and does a remote have
that commit?). Every command line of that question lives here."""

from __future__ import annotations

from journal_mem.gitops import gitcore


def is_tracked(folder: str, name: str) -> bool:
    """True when `folder/name` is tracked by the checkout `folder` lies in."""
    res = gitcore.run(["ls-files", "-z", "--", name], folder, clean=True, check=False)
    return res.ok and bool(res.stdout)


def top_and_head(folder: str) -> tuple[str, str] | None:
    """(work tree top, HEAD commit) of the checkout holding `folder`; None without one."""
    res = gitcore.run(["rev-parse", "--show-toplevel", "HEAD"], folder, clean=True,
                      check=False)
    if not res.ok:
        return None
    top, head = res.text().split("\n")[:2]
    return top, head


def blob_ids(top: str, rev: str, prefix: str) -> dict[str, str]:
    """{path: blob id} of every file under `prefix` in `rev`'s tree."""
    out = {}
    listing = gitcore.run(["ls-tree", "-r", "-z", rev, "--", prefix], top, clean=True)
    for record in listing.stdout.split(b"\0"):
        if record:
            meta, _, path = record.partition(b"\t")
            out[path.decode("utf-8", "surrogateescape")] = meta.split()[2].decode()
    return out


def hash_files(top: str, paths: list[str]) -> list[str]:
    """The blob id each file at `paths` would get, as stored bytes (no filters)."""
    listing = "".join(p + "\n" for p in paths).encode("utf-8", "surrogateescape")
    return gitcore.run(["hash-object", "--no-filters", "--stdin-paths"], top, clean=True,
                       stdin=listing).text().split()


def remotes_with(top: str, commit: str) -> list[tuple[str, str, list[str]]]:
    """(remote, URL, remote-tracking refs containing `commit`) per remote: the upstream's
    remote first, then `origin`, then the others by name."""
    remotes = gitcore.run(["remote"], top, clean=True, check=False).text().split()
    upstream = gitcore.run(["rev-parse", "--abbrev-ref", "@{upstream}"], top, clean=True,
                           check=False).text().strip().split("/")[0]
    out = []
    for remote in sorted(remotes, key=lambda r: (r != upstream, r != "origin", r)):
        url = gitcore.run(["config", "--get", f"remote.{remote}.url"], top, clean=True,
                          check=False).text().strip()
        refs = gitcore.run(["for-each-ref", "--contains", commit, "--format=%(refname:short)",
                            f"refs/remotes/{remote}/"], top, clean=True, check=False)
        out.append((remote, url, refs.text().split()))
    return out
