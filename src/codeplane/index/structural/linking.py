"""Cross-file linking at index time (§7.3.2 STRONG, §7.3.6–7.3.8): module keys, import resolution,
export surfaces and the tiers of references that go through an import.

Incremental by construction: after a batch only these are redone —
1. module keys of the changed files (and of Python files below a directory whose ``__init__.py`` changed, or of
   every Python file when the import roots a ``pyproject.toml`` declares changed);
2. imports of changed files, and imports anywhere whose key was held or is now held by a changed file (a JS/TS
   one is keyed again: it takes the first of its candidates a file holds, ``modules.js_candidate_keys``, and
   one that passed over a candidate no file held is keyed again once a file holds it); every JS/TS file's
   imports when a tsconfig's ``paths`` or what resolution reads of the ``package.json`` files changed
   (``jspackages.py``: a version bump relinks nothing);
3. export surfaces of those files, then, transitively, of importers whose upstream surface hash changed or that
   re-export ``*`` from such a file; a rewritten file whose chase inputs came out as before (``_same_inputs``)
   counts as unchanged, so an edit inside bodies stops at the file;
4. references through imports: every one in the changed files; in other files only those through an import
   whose resolution moved or that leads into a file of step 3 (``affected.py``);
5. Go packages (``golink.py``): files of changed Go directories and their importers; Rust crates
   (``rustlink.py``): every file of a crate where a Rust file changed; Java, C# and PHP (``javalink.py``,
   ``cslink.py``, ``phplink.py``): the files ``classdeps.py`` finds; C and C++ (``clink.py``): changed files,
   files using their names, and files including a header whose names or includes changed.
Nothing is resolved at query time.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from dataclasses import dataclass, field

from codeplane.index.structural import (
    affected,
    clink,
    cslink,
    golink,
    javalink,
    jspackages,
    modules,
    phplink,
    rustlink,
    surfaces,
    tspaths,
)
from codeplane.index.structural.bulk import covers_most
from codeplane.index.structural.chase import Chaser
from codeplane.index.structural.store import BatchEffect, chunked, marks

_JS_LANGUAGES = ("javascript", "typescript", "tsx")


@dataclass
class LinkReport:
    rekeyed: int = 0
    imports_resolved: int = 0
    surfaces_changed: int = 0
    files_relinked: int = 0
    refs_changed: int = 0
    #: Member tokens whose tier moved between ANCHORED and STRONG (their anchor groups change).
    member_tokens: set[tuple[str, str]] = field(default_factory=set)


def _is_init(path: str) -> bool:
    return path.rsplit("/", 1)[-1] in ("__init__.py", "__init__.pyi")


def _init_dirs(conn: sqlite3.Connection, effect: BatchEffect) -> set[str]:
    """Directories holding ``__init__.py``, kept in ``st_state`` and updated in the same transaction (a scan
    of the file table per edit would cost tens of milliseconds on a large tree)."""
    row = conn.execute("SELECT value FROM st_state WHERE key = 'init_dirs'").fetchone()
    if row is None:
        dirs = {p.rpartition("/")[0] for (p,) in conn.execute("SELECT path FROM st_file") if _is_init(p)}
    else:
        dirs = set(json.loads(row[0]))
        if not effect.init_dirs_changed:
            return dirs
        present = {p.rpartition("/")[0] for (p,) in conn.execute(
            f"SELECT path FROM st_file WHERE path IN ({marks(2 * len(effect.init_dirs_changed))})",
            [f"{d}/{n}" if d else n for d in sorted(effect.init_dirs_changed)
             for n in ("__init__.py", "__init__.pyi")])}
        dirs = (dirs - effect.init_dirs_changed) | present
    conn.execute("INSERT OR REPLACE INTO st_state(key, value) VALUES ('init_dirs', ?)", (json.dumps(sorted(dirs)),))
    return dirs


def _py_roots(conn: sqlite3.Connection, effect: BatchEffect) -> tuple[dict[str, str], bool]:
    """Import roots declared by ``pyproject.toml`` files (``modules.pyproject_roots``), kept in ``st_state``;
    returns (roots, whether they changed in this batch). Marker texts of this batch are not stored in
    ``st_marker`` yet (contexts run after linking), so the batch's own texts take precedence."""
    row = conn.execute("SELECT value FROM st_state WHERE key = 'py_roots'").fetchone()
    touched = {p: t for p, t in effect.markers.items() if p.rsplit("/", 1)[-1] == "pyproject.toml"}
    if row is not None and not touched:
        return dict(json.loads(row[0])), False
    texts = {str(p): str(t) for p, t in conn.execute(
        "SELECT path, text FROM st_marker WHERE (path = 'pyproject.toml' OR path LIKE '%/pyproject.toml') "
        "AND text IS NOT NULL")}
    for path, text in touched.items():
        if text is None:
            texts.pop(path, None)
        else:
            texts[path] = text
    roots = modules.merge_roots(texts.items())
    old = dict(json.loads(row[0])) if row is not None else None
    conn.execute("INSERT OR REPLACE INTO st_state(key, value) VALUES ('py_roots', ?)",
                 (json.dumps(sorted(roots.items())),))
    return roots, old is not None and old != roots


def _ts_configs(conn: sqlite3.Connection, effect: BatchEffect) -> tuple[dict[str, tspaths.Config], bool]:
    """``baseUrl``/``paths`` of every ``tsconfig.json``/``jsconfig.json`` with what its ``extends`` chain sets
    (``tspaths.configs``), kept in ``st_state``; returns (configs, whether they changed in this batch)."""
    row = conn.execute("SELECT value FROM st_state WHERE key = 'ts_configs'").fetchone()
    touched = {p: t for p, t in effect.markers.items() if tspaths.is_config_text(p)}
    if row is not None and not touched:
        return {d: (b, u, [(p, t) for p, t in pats]) for d, (b, u, pats) in json.loads(row[0]).items()}, False
    texts = {str(p): str(t) for p, t in conn.execute(
        "SELECT path, text FROM st_marker WHERE (path LIKE '%tsconfig%.json' OR path LIKE '%jsconfig%.json') "
        "AND text IS NOT NULL") if tspaths.is_config_text(str(p))}
    for path, text in touched.items():
        if text is None:
            texts.pop(path, None)
        else:
            texts[path] = text
    configs = tspaths.configs(texts)
    encoded = json.dumps(configs, sort_keys=True)
    old = row[0] if row is not None else json.dumps({})
    conn.execute("INSERT OR REPLACE INTO st_state(key, value) VALUES ('ts_configs', ?)", (encoded,))
    return configs, json.loads(old) != json.loads(encoded)


def _js_packages(conn: sqlite3.Connection, effect: BatchEffect) -> tuple[jspackages.Packages, bool]:
    """What resolution reads of every ``package.json`` and ``pnpm-workspace.yaml`` (``jspackages.py``), kept in
    ``st_state``; returns (packages, whether they changed in this batch: a version bump changes nothing)."""
    row = conn.execute("SELECT value FROM st_state WHERE key = 'js_packages'").fetchone()
    touched = {p: t for p, t in effect.markers.items() if p.rsplit("/", 1)[-1] in jspackages.MARKER_NAMES}
    if row is not None and not touched:
        return _decoded(row[0]), False
    texts = {str(p): str(t) for p, t in conn.execute(
        "SELECT path, text FROM st_marker WHERE (path IN ('package.json', 'pnpm-workspace.yaml') OR path LIKE "
        "'%/package.json' OR path LIKE '%/pnpm-workspace.yaml') AND text IS NOT NULL")}
    for path, text in touched.items():
        if text is None:
            texts.pop(path, None)
        else:
            texts[path] = text
    packages = jspackages.Packages.from_texts(texts)
    encoded = packages.encode()
    conn.execute("INSERT OR REPLACE INTO st_state(key, value) VALUES ('js_packages', ?)", (encoded,))
    return packages, (row[0] if row is not None else jspackages.Packages({}).encode()) != encoded


@functools.lru_cache(maxsize=2)
def _decoded(text: str) -> jspackages.Packages:
    """Every batch reads the packages; a monorepo's ``exports`` maps make decoding them cost milliseconds."""
    return jspackages.Packages.decode(text)


def _shadowed(conn: sqlite3.Connection) -> dict[str, set[int]]:
    """Candidate keys no file held when a JS import was keyed, so a later candidate was taken → the importing
    files: a file taking such a key later must be keyed again (the first candidate held wins)."""
    row = conn.execute("SELECT value FROM st_state WHERE key = 'js_shadowed'").fetchone()
    return {k: set(v) for k, v in json.loads(row[0]).items()} if row is not None else {}


def _below(conn: sqlite3.Connection, directories: set[str]) -> set[int]:
    """Python files anywhere below ``directories`` ("" is the root): one scan, however many directories."""
    found: set[int] = set()
    for file_id, path in conn.execute("SELECT file_id, path FROM st_file WHERE language = 'python'"):
        directory = path.rpartition("/")[0]
        while directory not in directories and directory:
            directory = directory.rpartition("/")[0]
        if directory in directories:
            found.add(file_id)
    return found


#: A definition's qualified name in module ``:module`` ('' for none).
_QUALIFIED = "(CASE WHEN :module = '' THEN lexical_path ELSE :module || '.' || lexical_path END)"


def _rekey(conn: sqlite3.Connection, effect: BatchEffect, init_dirs: set[str], roots: dict[str, str], *,
           roots_changed: bool, report: LinkReport) -> tuple[set[int], set[str]]:
    """Recompute module keys and qualified names; returns (files rekeyed, keys that changed holders)."""
    targets = set(effect.upserted.values())
    if roots_changed:
        targets |= _below(conn, {""})
    elif effect.init_dirs_changed:
        targets |= _below(conn, effect.init_dirs_changed)
    changed_keys = set(effect.old_keys)
    changed_keys.update(f"path:{p}" for p in (*effect.deleted, *effect.upserted))
    rekeyed: set[int] = set()
    ids = sorted(targets)
    for part in chunked(ids):
        rows = conn.execute(f"SELECT file_id, path, language, package FROM st_file WHERE file_id IN "
                            f"({marks(len(part))})", part).fetchall()
        held: dict[int, list[tuple[str, int]]] = {}
        for file_id, key, rank in conn.execute(
                f"SELECT file_id, key, rank FROM st_module_key WHERE file_id IN ({marks(len(part))})", part):
            held.setdefault(file_id, []).append((key, rank))
        names = []
        # One DELETE and one INSERT statement per chunk, not per file (a batch's rewritten files lost their keys
        # with their facts, so every one of them is written again).
        stale: list[tuple[int]] = []
        inserts: list[tuple[str, int, int]] = []
        for file_id, path, language, package in rows:
            keys = modules.file_keys(path, language, package, init_dirs, roots)
            old = held.get(file_id, [])
            if sorted(old) != sorted(keys):
                if old:
                    stale.append((file_id,))
                inserts += [(k, file_id, r) for k, r in keys]
                changed_keys.update(k for k, _ in old)
                changed_keys.update(k for k, _ in keys)
                rekeyed.add(file_id)
            module = modules.module_name(path, language, package, init_dirs, roots)
            names.append({"module": module, "file_id": file_id})
        conn.executemany("DELETE FROM st_module_key WHERE file_id = ?", stale)
        conn.executemany("INSERT INTO st_module_key(key, file_id, rank) VALUES (?,?,?)", inserts)
        # Only rows whose name differs: a rewritten file keeps the definitions that came out the same
        # (``rewrite._write_defs``), and setting an indexed column to its own value still rewrites its index entry.
        conn.executemany(f"UPDATE st_def SET qualified_name = {_QUALIFIED} WHERE file_id = :file_id "
                         f"AND qualified_name IS NOT {_QUALIFIED}", names)
    report.rekeyed = len(rekeyed)
    return rekeyed | set(effect.upserted.values()), changed_keys


class _KeyResolver:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._memo: dict[str, int | None] = {}
        self._held: dict[str, bool] = {}

    def __call__(self, key: str | None) -> int | None:
        if key is None:
            return None
        if key in self._memo:
            return self._memo[key]
        result: int | None
        if key.startswith("path:"):
            row = self._conn.execute("SELECT file_id FROM st_file WHERE path = ?", (key[5:],)).fetchone()
            result = int(row[0]) if row else None
        else:
            rows = self._conn.execute("SELECT file_id, rank FROM st_module_key WHERE key = ? ORDER BY rank, file_id "
                                      "LIMIT 2", (key,)).fetchall()
            # Two holders with the same best rank: ambiguous, so unresolved (never a guess).
            ambiguous = len(rows) == 2 and rows[0][1] == rows[1][1]
            result = int(rows[0][0]) if rows and not ambiguous else None
        self._memo[key] = result
        return result

    def held(self, key: str) -> bool:
        """Whether any file holds ``key`` (even ambiguously: then it is the runtime's pick, not a later one's)."""
        if key not in self._held:
            self._held[key] = self._conn.execute("SELECT 1 FROM st_module_key WHERE key = ? LIMIT 1",
                                                 (key,)).fetchone() is not None
        return self._held[key]


class _JsKeys:
    """JS/TS import keys: the first candidate (``modules.js_candidate_keys``) a file holds, else the first one;
    the candidates passed over are recorded per importing file (``shadows``: see ``_shadowed``)."""

    def __init__(self, ts_configs: tspaths.Configs | None, packages: jspackages.Packages | None,
                 resolve: _KeyResolver) -> None:
        self._ts, self._packages, self._resolve = ts_configs, packages, resolve
        self._memo: dict[tuple[str, str], tuple[str | None, tuple[str, ...]]] = {}
        self.shadows: dict[str, set[int]] = {}

    def __call__(self, file_id: int, path: str, source: str | None) -> str | None:
        if source is None:
            return None
        memo_key = (path.rpartition("/")[0], source)  # candidates depend on the importer's directory only
        if memo_key not in self._memo:
            keys = modules.js_candidate_keys(path, source, self._ts, self._packages)
            chosen = next((k for k in keys if self._resolve.held(k)), keys[0] if keys else None)
            self._memo[memo_key] = (chosen, tuple(keys[:keys.index(chosen)]) if chosen is not None else ())
        chosen, passed = self._memo[memo_key]
        for key in passed:
            self.shadows.setdefault(key, set()).add(file_id)
        return chosen


def _resolve_imports(conn: sqlite3.Connection, keyed_files: set[int], changed_keys: set[str], init_dirs: set[str],
                     *, roots: dict[str, str], report: LinkReport, js_keys: _JsKeys,
                     resolve: _KeyResolver) -> tuple[set[int], set[str]]:
    """Set target keys and resolutions; returns (files whose import resolution changed or that were keyed,
    imports whose resolution moved)."""
    ids = sorted(keyed_files)
    # The keyed files' imports get their keys here and are written once, keys with resolution (one UPDATE per
    # import, not two); the resolver reads only module keys and files, never these columns.
    #: uid → (file id, target key, alt key, resolved, resolved alt, whether the keys are to be written)
    candidates: dict[str, tuple[int, str | None, str | None, int | None, int | None, bool]] = {}
    for part in chunked(ids):
        rows = conn.execute(
            f"SELECT i.import_uid, i.file_id, f.path, f.language, i.source_literal, i.imported_name, i.import_kind, "
            f"i.resolved_file_id, i.resolved_alt_file_id FROM st_import i JOIN st_file f ON f.file_id = i.file_id "
            f"WHERE i.file_id IN ({marks(len(part))})", part).fetchall()
        module_of: dict[str, str | None] = {}  # a file's imports share its module name
        for uid, file_id, path, language, source, name, kind, res, res_alt in rows:
            if language in _JS_LANGUAGES:
                candidates[uid] = (file_id, js_keys(file_id, path, source), None, res, res_alt, True)
                continue
            if language == "python" and path not in module_of:
                module_of[path] = modules.python_module(path, init_dirs, roots)
            module = module_of.get(path)
            is_package = path.rsplit("/", 1)[-1].startswith("__init__.")
            key, alt = modules.import_keys(path, module, is_package, language, source=source, name=name, kind=kind)
            candidates[uid] = (file_id, key, alt, res, res_alt, True)
    query = ("SELECT i.import_uid, i.file_id, i.target_key, i.alt_key, i.resolved_file_id, i.resolved_alt_file_id, "
             "f.path, f.language, i.source_literal FROM st_import i JOIN st_file f ON f.file_id = i.file_id WHERE ")
    keys = sorted(changed_keys)
    for start in range(0, len(keys), 400):
        part_keys = keys[start:start + 400]
        for column in ("target_key", "alt_key"):
            for uid, file_id, key, alt, res, res_alt, path, language, source in conn.execute(
                    query + f"i.{column} IN ({marks(len(part_keys))})", part_keys):
                if uid in candidates:
                    continue  # a keyed file's import is stored with its old keys still: its new ones are there
                # A JS import whose key changed holders may now take another candidate (its key's file is gone).
                new_key = js_keys(file_id, path, source) if language in _JS_LANGUAGES else key
                candidates[uid] = (file_id, new_key, alt, res, res_alt, new_key != key)
    changed_files: set[int] = set()
    moved: set[str] = set()
    updates_keyed = []
    updates_res = []
    for uid, (file_id, key, alt, res, res_alt, write_keys) in candidates.items():
        new_res, new_alt = resolve(key), resolve(alt)
        if (new_res, new_alt) != (res, res_alt):
            moved.add(uid)
        elif file_id not in keyed_files and not write_keys:
            continue
        if write_keys:
            updates_keyed.append((key, alt, new_res, new_alt, uid))
        else:
            updates_res.append((new_res, new_alt, uid))
        changed_files.add(file_id)
    conn.executemany("UPDATE st_import SET target_key = ?, alt_key = ?, resolved_file_id = ?, resolved_alt_file_id = ? "
                     "WHERE import_uid = ?", updates_keyed)
    conn.executemany("UPDATE st_import SET resolved_file_id = ?, resolved_alt_file_id = ? WHERE import_uid = ?",
                     updates_res)
    report.imports_resolved = len(updates_keyed) + len(updates_res)
    return changed_files, moved


def _keep_shadows(conn: sqlite3.Connection, shadowed: dict[str, set[int]], js_keys: _JsKeys, keyed: set[int],
                  gone: set[int]) -> None:
    """Store what ``js_keys`` passed over: the keyed files' entries are replaced, deleted files' dropped."""
    kept = {k: v - keyed - gone for k, v in shadowed.items()}
    for key, files in js_keys.shadows.items():
        kept.setdefault(key, set()).update(files)
    kept = {k: v for k, v in kept.items() if v}
    if kept != shadowed:
        conn.execute("INSERT OR REPLACE INTO st_state(key, value) VALUES ('js_shadowed', ?)",
                     (json.dumps({k: sorted(v) for k, v in sorted(kept.items())}),))


def _same_inputs(conn: sqlite3.Connection, effect: BatchEffect) -> set[int]:
    """Rewritten files (not new ones) whose ``surfaces.chase_inputs`` equal those before the batch; call once
    their imports are resolved and their surfaces refreshed."""
    rewritten = sorted(i for p, i in effect.upserted.items() if p not in effect.added)
    if not rewritten:
        return set()
    now = surfaces.chase_inputs(conn, rewritten)
    empty: surfaces.ChaseInputs = (None, (), ())
    return {i for i in rewritten if now.get(i, empty) == effect.old_inputs.get(i, empty)}


def relink(conn: sqlite3.Connection, effect: BatchEffect) -> LinkReport:
    """Bring keys, import resolutions, export surfaces and STRONG tiers up to date after ``effect``."""
    report = LinkReport()
    init_dirs = _init_dirs(conn, effect)
    roots, roots_changed = _py_roots(conn, effect)
    keyed, changed_keys = _rekey(conn, effect, init_dirs, roots, roots_changed=roots_changed, report=report)
    ts_configs, ts_changed = _ts_configs(conn, effect)
    packages, packages_changed = _js_packages(conn, effect)
    shadowed = _shadowed(conn)
    if ts_changed or packages_changed:  # every JS/TS import's key may change
        keyed |= {i for (i,) in conn.execute(
            "SELECT file_id FROM st_file WHERE language IN ('javascript', 'typescript', 'tsx')")}
    elif hit := sorted({f for k in changed_keys & shadowed.keys() for f in shadowed[k]}):
        # A file now holds a candidate an import passed over: that import takes it (TypeScript's order).
        keyed |= {i for part in chunked(hit) for (i,) in conn.execute(
            f"SELECT file_id FROM st_file WHERE file_id IN ({marks(len(part))})", part)}
    resolve = _KeyResolver(conn)
    js_keys = _JsKeys(ts_configs, packages, resolve)
    direct, moved_imports = _resolve_imports(conn, keyed, changed_keys, init_dirs, roots=roots, report=report,
                                             js_keys=js_keys, resolve=resolve)
    _keep_shadows(conn, shadowed, js_keys, keyed, set(effect.deleted.values()))
    direct |= keyed
    chaser = Chaser(conn)
    if covers_most(conn, direct):  # a cold index or a big checkout: read the chased tables whole
        chaser.preload()
    changed = surfaces.refresh(conn, chaser, direct, effect.epoch, None)
    # A rewritten file whose chase inputs and surface hash came out as before (an edit inside a body) is, to its
    # importers, an unchanged file: nothing a chase through it reads differs, so neither it nor they are redone.
    same = _same_inputs(conn, effect)
    changed -= same
    report.surfaces_changed += len(changed)
    # Files whose surface may differ from what importers last saw: changed files and changed surfaces.
    upstream = (set(effect.upserted.values()) | set(effect.deleted.values()) | keyed) - same
    # The first wave also starts from rewritten files without a surface: one that lost all its names has no
    # surface row left to change, yet its importers' refs must drop their STRONG tier.
    frontier = changed | (set(effect.upserted.values()) - same)
    dependants: set[int] = set()
    spread: set[int] = set()  # every file whose importers a wave visited
    stars: dict[int, set[int]] | None = None
    while frontier:  # waves: importers of changed surfaces, whose own surfaces may change in turn
        # A file re-exporting ``*`` from the frontier exports what it does, but its hash covers only the thunk's
        # target: count it (and, transitively, its own star re-exporters) as changed.
        stars = surfaces.star_holders(conn) if stars is None else stars
        grown = list(frontier)
        while grown:
            holders = stars.get(grown.pop(), set()) - spread - frontier
            frontier |= holders
            grown += holders
        spread |= frontier
        upstream |= frontier
        # Every importer, even one refreshed in an earlier wave: then its entries through this newly changed
        # file were skipped (not upstream yet). Ends: the chase reads no derived column, so an entry re-chased
        # once holds its final value, and a surface changes only when an entry does (a star re-exporter is
        # added at most once).
        wave = surfaces.importers(conn, frontier)
        dependants |= wave
        frontier = surfaces.refresh(conn, chaser, wave, effect.epoch, upstream)
        report.surfaces_changed += len(frontier)
    fresh = set(effect.upserted.values())
    # Rewritten files: every ref through an import. Other files: only refs whose chase can have moved
    # (``affected.py``): through an import whose resolution moved or that leads into ``upstream``.
    count, moved = surfaces.relink_refs(conn, chaser, fresh, upstream=None, fresh=fresh)
    more, moved_more = affected.relink_unchanged(conn, chaser, (direct | dependants) - fresh,
                                                 moved_imports=moved_imports, upstream=upstream, fresh=fresh)
    # Go, Rust, Java, C#, PHP and C/C++ last: their passes own the tiers of their refs, even those relink_refs reset.
    go_count, go_moved = golink.relink(conn, effect, fresh)
    rust_count, rust_moved = rustlink.relink(conn, effect, fresh)
    java_count, java_moved = javalink.relink(conn, effect, fresh)
    cs_count, cs_moved = cslink.relink(conn, effect, fresh)
    php_count, php_moved = phplink.relink(conn, effect, fresh)
    c_count, c_moved = clink.relink(conn, effect, fresh)
    report.refs_changed = count + more + go_count + rust_count + java_count + cs_count + php_count + c_count
    report.member_tokens = (moved | moved_more | go_moved | rust_moved | java_moved | cs_moved | php_moved
                            | c_moved)
    report.files_relinked = len(direct | dependants)
    return report
