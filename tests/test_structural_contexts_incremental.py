"""Contexts and unit ids after an incremental batch (``contexts.refresh``) against a cold build of the same tree.

A batch that edits a probe sample re-derives only that context's status (recomputing everything only when it
moved); one that touches no context routes only the files it wrote. Either way the stored contexts, every
file's unit and the units on export surfaces, thunks and anchor groups must be what a cold build stores.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from codeplane.index.facts_api import FileChange
from codeplane.index.structural import contexts
from codeplane.index.structural.contexts.discovery import Candidate
from codeplane.index.structural.indexer import StructuralIndexer

BROKEN = "def (((:\n    ]]] = = =\n" * 20

BASE = {
    "pyproject.toml": "[project]\nname = 'top'\n",
    "a.py": "from pkg.lib import helper\n\n\ndef run(obj):\n    obj.put()\n    return helper(1)\n",
    "pkg/__init__.py": "from pkg.lib import *\n",
    "pkg/lib.py": "__all__ = ['helper']\n\n\ndef helper(x):\n    return x\n",
    "pkg/deep/far_away_module.py": "from pkg.lib import helper\n\n\ndef go(obj):\n    obj.put()\n    helper(2)\n",
    "lib/pyproject.toml": "[project]\nname = 'lib'\n",
    "lib/x.py": "def solo(obj):\n    obj.put()\n    return 1\n",
    "tool/setup.py": "from setuptools import setup\n\nsetup(name='tool')\n",
}


def _apply(conn: sqlite3.Connection, indexer: StructuralIndexer, epoch: int, files: dict[str, str],
           deleted: tuple[str, ...] = ()) -> None:
    changes = [FileChange(p, None, t, f"sha-{p}-{hash(t)}") for p, t in sorted(files.items())]
    changes += [FileChange(p, None, None, "", deleted=True) for p in deleted]
    conn.execute("BEGIN IMMEDIATE")
    indexer.apply(conn, changes, epoch)
    conn.execute("COMMIT")


def _fresh() -> tuple[sqlite3.Connection, StructuralIndexer]:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    indexer = StructuralIndexer(workers=1)
    indexer.create_schema(conn)
    return conn, indexer


def _units(conn: sqlite3.Connection) -> dict[str, object]:
    """Contexts and every unit id, by (family, root) and path rather than by id."""
    name = {cid: (family, root) for cid, family, root in
            conn.execute("SELECT context_id, family, root_path FROM st_context")}
    paths = dict(conn.execute("SELECT file_id, path FROM st_file"))
    return {
        "contexts": sorted(conn.execute("SELECT family, root_path, tier, markers, probe_status, include_spec, "
                                        "exclude_spec, samples FROM st_context")),
        "files": sorted((path, name.get(unit)) for path, unit in conn.execute("SELECT path, unit_id FROM st_file")),
        "surfaces": sorted((paths[f], name.get(u)) for f, u in
                           conn.execute("SELECT file_id, unit_id FROM st_export_surface")),
        "thunks": sorted((paths[f], s, name.get(u)) for f, s, u in
                         conn.execute("SELECT file_id, source_literal, source_unit FROM st_export_thunk")),
        "groups": sorted((name.get(u), t, s, n) for u, t, s, n in conn.execute(
            "SELECT unit_id, member_token, receiver_shape, total_count FROM st_anchor_group")),
    }


def _status(conn: sqlite3.Connection, root: str) -> str:
    return str(conn.execute("SELECT probe_status FROM st_context WHERE family = 'python' AND root_path = ?",
                            (root,)).fetchone()[0])


SCENARIOS: dict[str, tuple[dict[str, str], tuple[str, ...]]] = {
    "a sample edited, its context's status kept": ({"a.py": BASE["a.py"] + "\n\ndef extra():\n    return 2\n"}, ()),
    "the only sample broken: the context fails": ({"lib/x.py": BROKEN}, ()),
    "a non-sample with exports and thunks edited": (
        {"pkg/__init__.py": "from pkg.lib import *\nfrom pkg.lib import helper as h2\n"}, ()),
    "a sample deleted": ({}, ("a.py",)),
    "a new file enters a sample set": ({"b.py": "def b(obj):\n    obj.put()\n"}, ()),
    "a setup.py edited (a marker whose content does not count)": (
        {"tool/setup.py": "from setuptools import setup\n\nsetup(name='tool', version='2')\n"}, ()),
    "a pyproject.toml edited (a marker whose content counts)": (
        {"lib/pyproject.toml": "[project]\nname = 'lib2'\n"}, ()),
    "a new file no sample set takes": ({"pkg/deep/even_longer_module_name.py": "def z(obj):\n    obj.put()\n"}, ()),
    "a sample broken and a new file no sample set takes": (
        {"lib/x.py": BROKEN, "pkg/deep/even_longer_module_name.py": "def z(obj):\n    obj.put()\n"}, ()),
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_an_incremental_batch_leaves_contexts_and_units_as_a_cold_build(name: str) -> None:
    files, deleted = SCENARIOS[name]
    conn, indexer = _fresh()
    cold, cold_indexer = _fresh()
    try:
        _apply(conn, indexer, 1, BASE)
        assert _status(conn, "lib") == "valid"
        _apply(conn, indexer, 2, files, deleted)
        after = {p: t for p, t in {**BASE, **files}.items() if p not in deleted}
        _apply(cold, cold_indexer, 1, after)
        assert _units(conn) == _units(cold)
    finally:
        conn.close()
        cold.close()


def test_a_broken_sample_fails_its_context_and_a_repaired_one_restores_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the status moves: stored, and the files inside that context re-routed, without recomputing."""
    conn, indexer = _fresh()
    try:
        _apply(conn, indexer, 1, BASE)
        lib_units = {u for (u,) in conn.execute("SELECT unit_id FROM st_file WHERE path LIKE 'lib/%.py'")}
        assert lib_units != {0}

        def recompute(_conn: sqlite3.Connection) -> list[Candidate]:
            raise AssertionError("contexts recomputed for a batch that moves one probe status")

        monkeypatch.setattr(contexts, "compute", recompute)
        _apply(conn, indexer, 2, {"lib/x.py": BROKEN})
        assert _status(conn, "lib") == "failed"
        assert {u for (u,) in conn.execute("SELECT unit_id FROM st_file WHERE path LIKE 'lib/%.py'")} == {0}
        _apply(conn, indexer, 3, {"lib/x.py": BASE["lib/x.py"]})
        assert _status(conn, "lib") == "valid"
        assert {u for (u,) in conn.execute("SELECT unit_id FROM st_file WHERE path LIKE 'lib/%.py'")} == lib_units
    finally:
        conn.close()


def test_an_edit_that_keeps_every_status_does_not_recompute_contexts(monkeypatch: pytest.MonkeyPatch) -> None:
    conn, indexer = _fresh()
    try:
        _apply(conn, indexer, 1, BASE)
        samples = json.loads(conn.execute("SELECT samples FROM st_context WHERE family = 'python' "
                                          "AND root_path = ''").fetchone()[0])
        assert "a.py" in samples

        def recompute(_conn: sqlite3.Connection) -> list[Candidate]:
            raise AssertionError("contexts recomputed for an edit that moves no probe")

        monkeypatch.setattr(contexts, "compute", recompute)
        _apply(conn, indexer, 2, {"a.py": BASE["a.py"] + "\n\ndef extra():\n    return 2\n"})
    finally:
        conn.close()


def test_an_edited_setup_py_does_not_recompute_contexts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a marker's presence counts unless it is a content marker (pyproject.toml, package.json...): rewriting
    a setup.py (a 100k-file checkout or an artifact's clone touches some) moves no context."""
    conn, indexer = _fresh()
    try:
        _apply(conn, indexer, 1, BASE)

        def recompute(_conn: sqlite3.Connection) -> list[Candidate]:
            raise AssertionError("contexts recomputed for an edit of a marker whose content does not count")

        monkeypatch.setattr(contexts, "compute", recompute)
        _apply(conn, indexer, 2, {"tool/setup.py": "from setuptools import setup\n\nsetup(name='tool2')\n"})
    finally:
        conn.close()
