"""Renaming a parameter of an overridden method renames the keyword at calls that may reach it, never at a call
whose receiver is exactly a subclass overriding the method: ``LoudJob().run(amount=1)`` runs ``LoudJob.run``, whose
parameter keeps its name (it was a ``medium`` edit, applied by default: TypeError)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.refactor_builders import refactor_env

FILES = {
    "pkg/__init__.py": "",
    "pkg/jobs.py": ("class Job:\n    def run(self, amount, verbose=False):\n        return amount\n\n\n"
                    "class LoudJob(Job):\n    def run(self, amount, verbose=False):\n        return amount * 10\n\n\n"
                    "def execute(job: Job) -> int:\n    return job.run(amount=2)\n"),
    "pkg/more.py": ("from .jobs import Job, LoudJob\n\n\nclass Quiet(LoudJob):\n    def go(self):\n"
                    "        return self.run(amount=3) + super().run(amount=4)\n\n\n"
                    "class Plain(Job):\n    def go(self):\n        return self.run(amount=5)\n\n\n"
                    "def total():\n    j = LoudJob()\n"
                    "    return (j.run(amount=6) + Job().run(amount=7) + Plain().go() + Quiet().go()\n"
                    "            + LoudJob().run(amount=1))\n"),
    "main.py": "from pkg.jobs import Job, execute\nfrom pkg.more import total\n\nprint(execute(Job()), total())\n",
}
OUTPUT = "2 152\n"


def _run(root: Path) -> str:
    proc = subprocess.run([sys.executable, "main.py"], cwd=root, capture_output=True, text=True, check=False,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_a_call_on_an_overriding_subclass_keeps_its_keyword(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        assert _run(env.root) == OUTPUT
        preview = env.service.rename(None, "qty", path="pkg/jobs.py", line=2, column=19)
        keywords = {(e.path, e.line, e.column) for e in preview.edits if e.reason == "call_keyword"}
        # ``job: Job`` may be a LoudJob (warned), ``Plain`` inherits Job.run, ``Job()`` is a Job
        assert keywords == {("pkg/jobs.py", 12, 19), ("pkg/more.py", 11, 24), ("pkg/more.py", 16, 40)}
        assert [w for w in preview.warnings if "LoudJob.run" in w]
        env.service.apply(preview.refactor_id)
        more = env.read("pkg/more.py")
        assert "self.run(amount=3) + super().run(amount=4)" in more
        assert "j.run(amount=6) + Job().run(qty=7)" in more and "+ LoudJob().run(amount=1))" in more
        assert _run(env.root) == OUTPUT
