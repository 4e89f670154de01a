"""Another git revision's source tree beside this one, with its C extension, for before/after benchmarks."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def baseline_tree(rev: str) -> Iterator[Path]:
    """A temporary worktree of git revision `rev` with its C extension: this tree's copied in if the C sources are
    the same, else built there; removed after."""
    changed = subprocess.run(["git", "diff", "--quiet", rev, "--", "*.c", "*.h", "setup.py"], cwd=ROOT)
    where = Path(tempfile.mkdtemp(prefix="kalah-baseline-")) / "tree"
    subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(where), rev], cwd=ROOT, check=True)
    try:
        if changed.returncode == 0:
            for built in ROOT.glob("bots/*.so"):
                shutil.copy2(built, where / built.relative_to(ROOT))
        else:
            print(f"building {rev}'s C extension (its C sources differ from this tree's)", flush=True)
            subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=where, check=True,
                           stdout=subprocess.DEVNULL)
        yield where
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(where)], cwd=ROOT, check=False)
        shutil.rmtree(where.parent, ignore_errors=True)
