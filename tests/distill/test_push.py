"""`jmem distill --push`: clones racing against one bare remote, and merges of
another machine's distill through the installed guard."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from helpers import git, jmem
from scale_helpers import MEM, clone, make_remote, push, quiet_env, titles, updates, write

AGENTS = ("api", "web", "search", "docs")


def _race(tmp_path: Path, rounds: int) -> tuple[Path, dict[str, int]]:
    """Four clones, each `rounds` times: write a lesson, then distill --push."""
    remote = make_remote(tmp_path, AGENTS)
    clones = [clone(remote, tmp_path / f"m{i}") for i in range(len(AGENTS))]
    stats = {"pushes": 0, "rejected": 0, "attempts": 0}
    failures: list[BaseException] = []
    lock = threading.Lock()

    def machine(i: int) -> None:
        try:
            for r in range(rounds):
                write(clones[i], AGENTS[i], f"Lesson {r} of machine {i}")
                data = push(clones[i])
                report = data["push"]
                assert isinstance(report, dict)
                with lock:
                    stats["pushes"] += 1 if report["pushed"] else 0
                    stats["rejected"] += int(report["rejected"])
                    stats["attempts"] += int(report["attempts"])
        except BaseException as exc:  # reported by the main thread
            failures.append(exc)

    threads = [threading.Thread(target=machine, args=(i,)) for i in range(len(clones))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        raise failures[0]
    return remote, stats


def _assert_final(remote: Path, tmp_path: Path, rounds: int) -> None:
    final = clone(remote, tmp_path / "final")
    for i, agent in enumerate(AGENTS):
        memory = titles(final, agent)
        for r in range(rounds):
            assert f"Lesson {r} of machine {i}" in memory, (agent, r)
        assert len(list((final / MEM / agent / "journal").glob("*.md"))) == rounds
    check = jmem(final, "check")
    assert check.returncode == 0, check.stdout + check.stderr
    rebuild = jmem(final, "distill", "--rebuild", "--check")
    assert rebuild.returncode == 0, rebuild.stdout + rebuild.stderr
    seen = updates(remote)
    assert seen and not [u for u in seen if u.startswith("FORCED")]
    history = git(final, "log", "--format=%P", "main").stdout.split("\n")
    assert all(len(parents.split()) <= 1 for parents in history)  # linear: no merges


def test_four_clones_race_and_every_lesson_lands(tmp_path: Path) -> None:
    started = time.monotonic()
    remote, stats = _race(tmp_path, rounds=3)
    _assert_final(remote, tmp_path, rounds=3)
    assert stats["pushes"] == 4 * 3
    # the seed's two commits, then one distill commit per push, in a line
    assert git(remote, "rev-list", "--count", "main").stdout.strip() == str(2 + 12)
    print(f"race: 4 clones x 3 rounds in {time.monotonic() - started:.1f} s, "
          f"{stats['rejected']} rejected pushes")


@pytest.mark.slow
def test_four_clones_race_ten_rounds(tmp_path: Path) -> None:
    remote, _ = _race(tmp_path, rounds=10)
    _assert_final(remote, tmp_path, rounds=10)


def test_lost_race_is_unwound_and_redone_on_the_new_tip(tmp_path: Path) -> None:
    remote = make_remote(tmp_path)
    one, two = clone(remote, tmp_path / "one"), clone(remote, tmp_path / "two")
    write(one, "api", "Lesson from machine one")
    assert jmem(one, "distill", env=quiet_env()).returncode == 0  # ready to push
    # two's first push loses: just before it, machine one pushes (a pre-push hook)
    hook = two / ".git" / "hooks" / "pre-push"
    hook.write_text(f"""#!/bin/sh
[ -e "{tmp_path}/raced" ] && exit 0
touch "{tmp_path}/raced"
env -u GIT_DIR -u GIT_INDEX_FILE -u GIT_WORK_TREE git -C "{one}" push -q origin main
""")
    hook.chmod(0o755)
    write(two, "web", "Lesson from machine two")
    report = push(two)["push"]
    assert isinstance(report, dict)
    assert report["rejected"] == 1 and report["attempts"] == 2
    assert report["steps"] == ["up to date", "fast-forward"]
    final = clone(remote, tmp_path / "final")
    assert "Lesson from machine one" in titles(final, "api")
    assert "Lesson from machine two" in titles(final, "web")
    assert jmem(final, "check").returncode == 0
    parents = git(final, "log", "--format=%P", "main").stdout.splitlines()
    assert all(len(p.split()) <= 1 for p in parents)  # no merge commit
    assert git(two, "status", "--porcelain").stdout == ""  # nothing left behind


def test_remote_moved_after_our_distill_commit_unwinds_it(tmp_path: Path) -> None:
    """A stale remote-tracking view: our distill commit is rejected, then redone on top."""
    remote = make_remote(tmp_path)
    one, two = clone(remote, tmp_path / "one"), clone(remote, tmp_path / "two")
    write(one, "api", "Lesson one")
    assert push(one)["push"]
    write(two, "web", "Lesson two")
    # make two distill locally first (as its post-commit hook would) and push it by hand:
    # that is rejected by git, so nothing on the remote changes
    assert jmem(two, "distill").returncode == 0
    assert git(two, "push", "-q", "origin", "main", check=False).returncode != 0
    report = push(two)["push"]
    assert isinstance(report, dict) and report["steps"] == ["merged"]
    final = clone(remote, tmp_path / "final")
    assert "Lesson one" in titles(final, "api") and "Lesson two" in titles(final, "web")
    assert jmem(final, "check").returncode == 0


def test_refused_push_is_not_retried(tmp_path: Path) -> None:
    remote = make_remote(tmp_path)
    one = clone(remote, tmp_path / "one")
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'protected branch' >&2\nexit 1\n")
    hook.chmod(0o755)
    write(one, "api", "A lesson that cannot be pushed")
    proc = jmem(one, "distill", "--push", env=quiet_env())
    assert proc.returncode == 1
    assert "another reason than a race" in proc.stderr
    assert "A lesson that cannot be pushed" in titles(one, "api")  # committed locally


# --- the guard and merges of another machine's distill ----------------------------


def test_pull_of_another_machines_distill_passes_the_guard(tmp_path: Path) -> None:
    remote = make_remote(tmp_path)
    mine = clone(remote, tmp_path / "mine", hooks=True)
    ci = clone(remote, tmp_path / "ci")
    (mine / "code.py").write_text("x = 1\n")
    git(mine, "add", "code.py")
    git(mine, "commit", "-q", "-m", "local code", env=quiet_env())
    write(ci, "api", "Lesson distilled in CI")
    push(ci)
    pulled = git(mine, "pull", "--no-rebase", "--no-edit", "origin", "main", env=quiet_env(),
                 check=False)
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    parents = git(mine, "log", "-1", "--format=%P").stdout.split()
    assert len(parents) == 2  # a real merge commit, through pre-merge-commit
    assert "Lesson distilled in CI" in titles(mine, "api")
    assert jmem(mine, "check").returncode == 0


def test_hand_edit_in_a_merge_is_still_refused(tmp_path: Path) -> None:
    remote = make_remote(tmp_path)
    mine = clone(remote, tmp_path / "mine", hooks=True)
    ci = clone(remote, tmp_path / "ci")
    git(mine, "commit", "-q", "--allow-empty", "-m", "local work", env=quiet_env())
    write(ci, "api", "Lesson distilled in CI")
    push(ci)
    git(mine, "fetch", "-q", "origin")
    git(mine, "merge", "--no-commit", "--no-ff", "origin/main", env=quiet_env())
    memory = mine / MEM / "api" / "MEMORY.md"
    memory.write_text(memory.read_text() + "- a line typed by hand\n")
    git(mine, "add", "-A")
    done = git(mine, "commit", "--no-edit", env=quiet_env(), check=False)
    assert done.returncode != 0
    assert "generated by the distiller" in done.stderr
    assert "git checkout MERGE_HEAD --" in done.stderr


def test_push_merges_local_commits_and_a_local_distill(tmp_path: Path) -> None:
    """Diverged: local code and a local distill commit vs the remote's distill."""
    remote = make_remote(tmp_path)
    mine = clone(remote, tmp_path / "mine", hooks=True)
    ci = clone(remote, tmp_path / "ci")
    (mine / "code.py").write_text("x = 1\n")
    git(mine, "add", "code.py")
    git(mine, "commit", "-q", "-m", "local code", env=quiet_env())
    write(mine, "web", "Lesson distilled locally")
    assert jmem(mine, "distill", env=quiet_env()).returncode == 0
    write(ci, "api", "Lesson distilled in CI")
    push(ci)
    report = push(mine)["push"]
    assert isinstance(report, dict) and report["steps"] == ["merged"]
    final = clone(remote, tmp_path / "final")
    assert (final / "code.py").exists()
    assert "Lesson distilled locally" in titles(final, "web")
    assert "Lesson distilled in CI" in titles(final, "api")
    assert jmem(final, "check").returncode == 0
    assert not [u for u in updates(remote) if u.startswith("FORCED")]


def test_code_conflict_aborts_and_changes_nothing(tmp_path: Path) -> None:
    remote = make_remote(tmp_path)
    mine, other = clone(remote, tmp_path / "mine"), clone(remote, tmp_path / "other")
    for where, text in ((other, "theirs\n"), (mine, "mine\n")):
        (where / "README").write_text(text)
        git(where, "commit", "-q", "-am", "edit README")
    git(other, "push", "-q", "origin", "main")
    before = git(mine, "rev-parse", "HEAD").stdout
    write(mine, "api", "A lesson waiting for the conflict")
    proc = jmem(mine, "distill", "--push", env=quiet_env())
    assert proc.returncode == 1
    assert "README" in proc.stderr and "merge aborted" in proc.stderr
    assert git(mine, "rev-parse", "HEAD").stdout == before
    assert not (mine / ".git" / "MERGE_HEAD").exists()
    assert len(list((mine / MEM / "api" / "journal").glob("*.md"))) == 1


def test_giving_up_keeps_the_lesson_on_disk(tmp_path: Path) -> None:
    remote = make_remote(tmp_path)
    one, two = clone(remote, tmp_path / "one"), clone(remote, tmp_path / "two")
    write(one, "api", "Lesson from machine one")
    assert jmem(one, "distill", env=quiet_env()).returncode == 0
    hook = two / ".git" / "hooks" / "pre-push"
    hook.write_text(f"""#!/bin/sh
env -u GIT_DIR -u GIT_INDEX_FILE -u GIT_WORK_TREE git -C "{one}" push -q origin main
""")
    hook.chmod(0o755)
    lesson = write(two, "web", "Lesson that waits")
    proc = jmem(two, "distill", "--push", "--attempts", "1", env=quiet_env())
    assert proc.returncode == 1
    assert "moved on during each of 1 attempts" in proc.stderr
    assert lesson.exists()  # unwound: back to an untracked lesson, folded next time
    assert git(two, "status", "--porcelain", "--", MEM).stdout.startswith("??")


@pytest.mark.parametrize("took", [0.05, 0.3, 1.0, 30.0])
def test_a_loser_never_waits_much_longer_than_an_attempt(took: float) -> None:
    from journal_mem.distill import push as push_module

    for attempt in range(1, 51):
        for _ in range(20):
            wait = push_module.backoff(attempt, took)
            base = min(push_module.BACKOFF_CAP_S, max(push_module.BACKOFF_S, took))
            assert 0 < wait <= 1.5 * base  # past one attempt, the winners' next ones get in
    first = [push_module.backoff(1, took) for _ in range(50)]
    assert max(first) <= 1.5 * push_module.BACKOFF_S  # a first loss retries at once
