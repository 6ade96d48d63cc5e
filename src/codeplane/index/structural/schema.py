"""The structural tables in ``index.db`` (§7.3.1–7.3.11 plus contexts, §8.4).

All tables carry the ``st_`` prefix (the lexical index owns the unprefixed ones). Spec columns keep their
spec names; additions are marked. Positions: 1-based lines, 0-based character columns. ``file_id`` is this
tier's own id (``st_file``), stable while the path exists.

Ids of scopes, binds and refs are allocated by the writer (max + 1) so one ``executemany`` can insert a
file's rows with their cross-links already resolved.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from codeplane.index.structural.facts import CERTAIN, ROLES, STRONG, TIERS, UNCERTAIN

#: Bump whenever a table below or the meaning of a column changes (the index service then rebuilds).
#: 2: Python module keys follow the import system (namespace portions, src/ and pyproject roots, root aliases).
#: 3: Go links across files (go.mod text kept in st_marker; qualified types and literal keys are members).
#: 4: Rust links across files (path segments are members with a ``path:`` shape; aliased uses keep the original).
#: 5: tsconfig/jsconfig text kept in st_marker (``paths``/``baseUrl`` imports link).
#: 6: Java, C# and PHP link across files; TypeScript interface property signatures are field definitions.
#: 7: an import's own token names its import even where the local name is bound twice (``via_import_uid``).
#: 8: st_ref stores role and tiers as codes (generated text columns keep the spec's names and values).
#: 9: Go declared names carry the type they spell (``type:``/``ftype:`` shapes); members link through them.
#: 10: Rust declared names carry the type they spell; ``self.m`` and ``v.f`` link through it.
#: 11: Rust struct literal and pattern keys are members (``struct:``), shorthand keys and macro tokens have shapes.
#: 12: a Rust struct field's declared type carries ``ftype:``; ``x.f.m`` links through it.
#: 13: Go composite literal keys are members of the literal's type (``struct:``), linked through it.
#: 14: Go slice and array types are spelled ``[]T``; a ``range`` value has the element type of its operand.
#: 15: a ``.h`` header whose text is C++ is parsed as C++ (``languages.detect_source``).
#: 16: a leading UTF-8 byte-order mark is not part of the text (``repo.content.decode``): line 1's columns shift.
#: 17: CommonJS ``var x = require("m")``, ``require("m").y``, any other ``require``/``import()`` call, TypeScript's
#:     ``import x = require("m")``, ``jest.requireActual("m")``/``vi.importActual("m")`` are imports.
#: 18: a name bound to a function or class value (``var f = function f(a) {...}``) has the value's header as its
#:     signature and display name, not its first 200 bytes (a body change was a changed signature).
#: 19: a TypeScript interface member the grammar ran into the next (a generic call signature on its own line) is
#:     parsed as the member it is (``extract._parsed``): the definitions after it were lost in one error node; a
#:     TypeScript function's overload signatures, or Python ``@overload`` ones, and the implementation after them
#:     are one name (bound to the implementation);
#:     Go variables declared in a group (``var ( x = 1 )``, a ``var_spec_list``) are definitions and typed locals.
#: 20: every name of a declaration naming several (``var a, b int``, ``const X, Y = 1, 2``, Java/C# ``int a, b;``)
#:     is a definition, not only the first; C's file-scope ``int a;`` (no initialiser) is one.
#: 21: Python names unpacked in a module or class (``major, minor = ...``) are variables, as ``X = ...`` is, and
#:     so is a PEP 695 ``type Alias = ...``.
#: 22: JavaScript/TypeScript names destructured at module level (``const { a, b: bee } = obj``) and TypeScript
#:     enum members are definitions; so is a Rust trait's associated type, and a CommonJS export defined in place
#:     (``exports.f = function ...``, ``module.exports = { f: function ... }``, ``exports.VERSION = "1"``), a Go
#:     struct's embedded field, a C# event and a positional record's parameters (its properties).
#: 23: a TypeScript constructor's parameter properties (``constructor(private readonly x: number)``) are fields
#:     of its class.
#: 24: a JavaScript/TypeScript assignment's member target (``this.count = 0``) is a reference with the role
#:     DEFINITION, as a Python member store is (``this.count`` then names an attribute of the class).
#: 25: a TypeScript signature (an overload, a declared method, a function or constructor type) is a scope of its
#:     own: its parameters were bound in the enclosing scope (``type F = (options: O) => void`` made the file's
#:     ``options`` ambiguous, and ``constructor(options?: O);`` a collision for a field renamed ``options``).
#: 26: in JavaScript/TypeScript a use inside a function sees a binding its enclosing scope declares after the
#:     function (``function get() { return CONFIG.x }`` then ``const CONFIG = ...``): it was left unresolved, and an
#:     applied rename of ``CONFIG`` broke the module.
#: 27: a PHP constant named wherever an expression stands (``return LIMIT;``, ``$x = LIMIT;``, ``[LIMIT]``,
#:     ``case LIMIT:``, a default value) is a reference; only operands and arguments were.
#: 28: a Ruby constant, class or module binds in its scope, and a constant is looked up through methods and class
#:     bodies (``CONFIG`` in a ``def`` is the file's; ``LIMIT`` in ``K#size`` is ``K::LIMIT``): they were unresolved.
#: 29: a C file's own functions, file-scope variables and macros are resolved in it (a name the file defines is
#:     no macro there; several definitions of one name stay unresolved); they never were.
#: 30: a C++ class's fields and methods bind in its body: a use in a method, inline or defined outside the class in
#:     the same file (``int K::size() { return limit; }``), and a constructor's member initialiser (``: limit(0)``)
#:     resolve to the member; an applied rename of a field renamed the declaration and ``k.limit`` alone.
#: 31: a C++ method sees the members of the base classes its file defines (``struct D : B``; not a template's).
#: 32: a C/C++ file that fails to parse is parsed again with its specifier and qualifier macros blanked
#:     (``POCKETFFT_NOINLINE K(int n) : n_(n)``, ``T * POCKETFFT_RESTRICT p``), kept when that has fewer errors.
#: 33: a C++ field declared twice in a class (``#if`` alternatives) is one member to its uses (they were ambiguous).
#: 34: the same for a macro standing for a template parameter (``template <class D, HWY_IF_V_SIZE_D(D, 16)>``).
#: 35: C and C++ across files (``clink.py``): includes, external linkage, members defined apart (``ns::K::m`` is a
#:     definition of ``ns.K.m``); a C++ qualifier is a reference and a qualified name has the shape ``q:<qualifier>``.
#: 36: C++ definitions behind ``*``, ``**``, ``&`` or ``[N]`` (``Edge* in_edge_;``, ``const std::string& path() const``,
#:     ``Node* State::LookupNode(...)``) and C functions returning ``T**``.
#: 37: C struct fields (also of ``typedef struct {...} T;``) are definitions; a C/C++ declared name carries its
#:     class as ``type:T`` (``Node* n``), the refactor planner's receiver evidence.
#: 38: a C/C++ function pointer field (``int (*apply)(int);``) is a field.
#: 39: the C/C++ ``type:`` shape is on declared names only (definitions, locals, parameters).
#: 40: a C++ standard container's element class (``type:[]Node``) and ``for (auto* n : nodes)`` (``each:nodes``).
#: 41: a C++ forward declaration (``class MemTable;``), a class's bases and the first name of a definition's
#:     qualified name (``MemTable::`` in ``int MemTable::KeyComparator::operator()(...)``) carry their namespace
#:     (``n:``, an anonymous namespace's being its parent's); a nested class defined apart (``struct
#:     DBImpl::Writer {...}``) is a class.
#: 42: a C++ ``std::unique_ptr<T>``/``std::shared_ptr<T>`` is ``type:*T`` (as an iterator: ``p->m`` is ``T``'s),
#:     also as a container's element.
#: 43: C++ ``Slice input(rep_);`` in a function body (the most vexing parse) declares a local ``input``.
#: 44: C/C++: the parameters of a parameter's function type (``void (*deleter)(const Slice& key)``) bind nothing.
#: 45: ``.inl``, ``.ipp`` and ``.h++`` files are C++ of the program that includes them (linked with its ``.hpp``).
#: 46: C++ a qualified name (``Shape::Area()``) is linked even where the scope around it binds the name.
#: 47: C++ a namespace's variables and constants are definitions (``namespace geo { constexpr int k = 2; }``).
#: 48: Python quoted annotations (``-> "Widget"``, ``Optional["Widget"]``) hold references, as unquoted ones do.
#: 49: a JS/TS ``export * from`` re-exports ``_`` names (linked through the barrel, as TypeScript does); a TS
#:     ``Kind.Alpha`` in a type is a member of ``Kind``; ``interface Thing`` / ``type Thing`` beside ``const Thing``
#:     is one merged name (its uses bind), not rival declarations.
#: 50: a Go embedded field carries its type (``ftype:``): ``b.Sq.Area()`` links; a member of a value built or
#:     asserted in place (``T{...}.M()``, ``new(T).M()``, ``x.(T).M()``) has the shape ``lit:T`` and links to ``T.M``;
#:     a member promoted from an embedded field (``b.Area()``) links.
#: 51: context ids derived from (family, root) (``contexts.context_ids``), not autoincrement.
#: 52: PHP ``K::N`` links only to constants and ``$x->n`` only to properties (``$x::N`` has the shape ``expr::$``).
#: 53: a Rust member that is not called (``x.f``, ``(x.f)(..)``) has the shape ``self.$`` / ``obj.$`` / ``expr.$``:
#:     ``x.len`` links only to a field and ``x.len()`` only to a method (a type's getter ``len()`` beside its field
#:     ``len`` left both ANCHORED).
#: 54: a Go call with type arguments (``F[int](x)``) carries ``type:F()`` and an embedded or typed generic field
#:     (``*Stack[T]``, ``pkg.Stack[T]``) carries ``ftype:``; a Rust macro body's ``fn f`` of ``impl Tr for $t`` and
#:     ``<T as Tr>::f`` among a macro's tokens have the shape ``mpath:Tr``.
#: 55: Java method references link their method (``::`` shapes); type parameters carry ``bound:``, the type of
#:     ``new C() {...}`` ``anon:``; an anonymous class's method names the method it overrides.
#: 56: a Go method expression (``(*T).M``, ``(*pkg.T[int]).M``) carries ``lit:T``.
#: 57: ``await vi.importActual<T>('m')`` (type arguments, which tree-sitter-typescript parses as a call of
#:     ``await vi.importActual``) is an import of ``m``.
#: 58: JS/TS imports resolve through the repository's ``package.json`` files (``jspackages.py``: workspace members,
#:     self-references, ``#imports``, a directory's ``main``); indexes keyed without them are built again.
#: 59: a tsconfig's ``baseUrl``/``paths`` come through its ``extends`` chain (``tspaths.py``); the texts of the configs
#:     it names (``tsconfig.base.json``) are kept in ``st_marker``, which earlier indexes lack.
SCHEMA_VERSION = 59

TABLES = (
    "st_file", "st_module_key", "st_def", "st_scope", "st_bind", "st_import", "st_ref", "st_export_surface",
    "st_export_entry", "st_export_thunk", "st_anchor_group", "st_dynamic_site", "st_def_snapshot",
    "st_snapshot_file", "st_context", "st_marker", "st_state",
)

_DDL = """
-- st_ref first: the largest table by far, and an exported index.db keeps the tables' order (VACUUM INTO),
-- so an artifact's unpack writes its pages first and their integrity check begins while the rest unpacks
CREATE TABLE IF NOT EXISTS st_ref (
    ref_id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL,
    scope_id INTEGER,
    token_text TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    start_col INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    end_col INTEGER NOT NULL,
    -- role, ref_tier and local_tier are stored as codes and read as the spec's text through the generated
    -- columns at the end (certainty follows from the tier), see ``ROLE_CODE`` and ``TIER_CODE``
    role_code INTEGER NOT NULL,
    tier_code INTEGER NOT NULL,
    -- additions: the binding (PROVEN), the def/import denoted, the import traversed, member shape, and the
    -- same-file tier/target before cross-file linking (so linking can be redone incrementally)
    bind_id INTEGER,
    target_uid TEXT,
    via_import_uid TEXT,
    is_member INTEGER NOT NULL,
    receiver_shape TEXT,
    local_tier_code INTEGER NOT NULL,
    local_target_uid TEXT,
    role TEXT GENERATED ALWAYS AS ({role}) VIRTUAL,
    ref_tier TEXT GENERATED ALWAYS AS ({tier}) VIRTUAL,
    certainty TEXT GENERATED ALWAYS AS ({certainty}) VIRTUAL,
    local_tier TEXT GENERATED ALWAYS AS ({local_tier}) VIRTUAL
);
CREATE INDEX IF NOT EXISTS st_ref_file ON st_ref(file_id, start_line);
CREATE INDEX IF NOT EXISTS st_ref_token ON st_ref(token_text);
CREATE INDEX IF NOT EXISTS st_ref_target ON st_ref(target_uid) WHERE target_uid IS NOT NULL;
CREATE INDEX IF NOT EXISTS st_ref_via ON st_ref(via_import_uid) WHERE via_import_uid IS NOT NULL;
CREATE TABLE IF NOT EXISTS st_file (
    file_id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    language TEXT,
    family TEXT,
    -- parsed | unsupported | grammar_missing | parse_failed | not_text
    status TEXT NOT NULL,
    error TEXT,
    unit_id INTEGER NOT NULL DEFAULT 0,
    package TEXT,
    node_count INTEGER,
    error_count INTEGER,
    has_named INTEGER,
    line_count INTEGER,
    file_sha256 TEXT NOT NULL,
    epoch INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS st_file_language ON st_file(language);
-- addition: how imports name this file (``py:django.db.models``, ``js:src/app``, ``jvm:a.b.C``)
CREATE TABLE IF NOT EXISTS st_module_key (
    key TEXT NOT NULL,
    file_id INTEGER NOT NULL,
    rank INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (key, file_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS st_module_key_file ON st_module_key(file_id);
CREATE TABLE IF NOT EXISTS st_def (
    def_uid TEXT PRIMARY KEY,
    file_id INTEGER NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    qualified_name TEXT NOT NULL,
    lexical_path TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    start_col INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    end_col INTEGER NOT NULL,
    name_line INTEGER NOT NULL,
    name_col INTEGER NOT NULL,
    signature_hash TEXT NOT NULL,
    display_name TEXT NOT NULL,
    parent_uid TEXT,
    scope_id INTEGER,
    name_lc TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS st_def_file ON st_def(file_id, start_line);
CREATE INDEX IF NOT EXISTS st_def_name ON st_def(name_lc);
CREATE INDEX IF NOT EXISTS st_def_qualified ON st_def(qualified_name);
CREATE TABLE IF NOT EXISTS st_scope (
    scope_id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL,
    parent_scope_id INTEGER,
    kind TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    start_col INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    end_col INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS st_scope_file ON st_scope(file_id);
CREATE TABLE IF NOT EXISTS st_bind (
    bind_id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL,
    scope_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    target_kind TEXT NOT NULL,
    target_uid TEXT,
    certainty TEXT NOT NULL,
    reason_code TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS st_bind_scope ON st_bind(scope_id, name);
CREATE INDEX IF NOT EXISTS st_bind_file ON st_bind(file_id);
CREATE TABLE IF NOT EXISTS st_import (
    import_uid TEXT PRIMARY KEY,
    file_id INTEGER NOT NULL,
    scope_id INTEGER,
    imported_name TEXT NOT NULL,
    alias TEXT,
    source_literal TEXT,
    import_kind TEXT NOT NULL,
    certainty TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    start_col INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    end_col INTEGER NOT NULL,
    -- additions: the module key the source names (and, for ``from pkg import name``, the submodule key),
    -- and what linking resolved them to
    target_key TEXT,
    alt_key TEXT,
    resolved_file_id INTEGER,
    resolved_alt_file_id INTEGER
);
CREATE INDEX IF NOT EXISTS st_import_file ON st_import(file_id);
CREATE INDEX IF NOT EXISTS st_import_source ON st_import(source_literal);
CREATE INDEX IF NOT EXISTS st_import_target ON st_import(target_key);
CREATE INDEX IF NOT EXISTS st_import_alt ON st_import(alt_key) WHERE alt_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS st_import_resolved ON st_import(resolved_file_id) WHERE resolved_file_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS st_import_resolved_alt ON st_import(resolved_alt_file_id)
    WHERE resolved_alt_file_id IS NOT NULL;
CREATE TABLE IF NOT EXISTS st_export_surface (
    surface_id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL UNIQUE,
    unit_id INTEGER NOT NULL,
    surface_hash TEXT NOT NULL,
    epoch_id INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS st_export_entry (
    entry_id INTEGER PRIMARY KEY,
    surface_id INTEGER NOT NULL,
    exported_name TEXT NOT NULL,
    def_uid TEXT,
    certainty TEXT NOT NULL,
    evidence_kind TEXT NOT NULL,
    -- additions: the file, and what the name is bound to locally (a def, or an import to follow)
    file_id INTEGER NOT NULL,
    local_def_uid TEXT,
    import_uid TEXT
);
CREATE INDEX IF NOT EXISTS st_export_entry_file ON st_export_entry(file_id, exported_name);
CREATE INDEX IF NOT EXISTS st_export_entry_def ON st_export_entry(def_uid) WHERE def_uid IS NOT NULL;
CREATE TABLE IF NOT EXISTS st_export_thunk (
    thunk_id INTEGER PRIMARY KEY,
    source_unit INTEGER NOT NULL,
    target_unit INTEGER,
    mode TEXT NOT NULL,
    explicit_names TEXT,
    alias_map TEXT,
    evidence_kind TEXT NOT NULL,
    -- additions: the re-exporting file, its import, and the file re-exported from (once linked)
    file_id INTEGER NOT NULL,
    import_uid TEXT NOT NULL,
    source_literal TEXT NOT NULL,
    target_file_id INTEGER
);
CREATE INDEX IF NOT EXISTS st_export_thunk_file ON st_export_thunk(file_id);
CREATE TABLE IF NOT EXISTS st_anchor_group (
    group_id INTEGER PRIMARY KEY,
    unit_id INTEGER NOT NULL,
    member_token TEXT NOT NULL,
    receiver_shape TEXT NOT NULL,
    total_count INTEGER NOT NULL,
    exemplar_ids TEXT NOT NULL,
    UNIQUE (member_token, receiver_shape, unit_id)
);
CREATE TABLE IF NOT EXISTS st_dynamic_site (
    site_id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL,
    start_line INTEGER NOT NULL,
    start_col INTEGER NOT NULL,
    pattern_type TEXT NOT NULL,
    extracted_literals TEXT NOT NULL,
    has_non_literal_key INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS st_dynamic_site_file ON st_dynamic_site(file_id);
CREATE TABLE IF NOT EXISTS st_def_snapshot (
    id INTEGER PRIMARY KEY,
    epoch_id INTEGER NOT NULL,
    file_path TEXT NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    lexical_path TEXT NOT NULL,
    signature_hash TEXT NOT NULL,
    display_name TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    def_uid TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS st_def_snapshot_epoch ON st_def_snapshot(epoch_id);
CREATE INDEX IF NOT EXISTS st_def_snapshot_path ON st_def_snapshot(file_path, epoch_id);
-- addition: which files were snapshotted at an epoch (a file with no defs, or deleted, leaves no
-- st_def_snapshot row, yet its state changed)
CREATE TABLE IF NOT EXISTS st_snapshot_file (
    epoch_id INTEGER NOT NULL,
    file_path TEXT NOT NULL,
    deleted INTEGER NOT NULL,
    def_count INTEGER NOT NULL,
    PRIMARY KEY (file_path, epoch_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS st_context (
    context_id INTEGER PRIMARY KEY,
    family TEXT NOT NULL,
    root_path TEXT NOT NULL,
    tier INTEGER NOT NULL,
    markers TEXT NOT NULL,
    probe_status TEXT NOT NULL,
    include_spec TEXT NOT NULL,
    exclude_spec TEXT NOT NULL,
    samples TEXT NOT NULL,
    UNIQUE (family, root_path)
);
CREATE TABLE IF NOT EXISTS st_marker (
    path TEXT PRIMARY KEY,
    text TEXT
);
-- addition: small facts about the indexer itself (the last batch's timings, for status)
CREATE TABLE IF NOT EXISTS st_state (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""


#: How ``st_ref`` stores a role or a tier: its position in ``ROLES`` / ``TIERS``. Four text columns were a third
#: of a reference row (31M rows, 2.7 GB on a 133k-file tree); as codes they take one byte each.
ROLE_CODE: dict[str, int] = {role: code for code, role in enumerate(ROLES)}
TIER_CODE: dict[str, int] = {tier: code for code, tier in enumerate(TIERS)}


def _decode(column: str, names: Iterable[str]) -> str:
    return f"CASE {column} " + " ".join(f"WHEN {code} THEN '{name}'" for code, name in enumerate(names)) + " END"


DDL = _DDL.format(
    role=_decode("role_code", ROLES), tier=_decode("tier_code", TIERS), local_tier=_decode("local_tier_code", TIERS),
    certainty=f"CASE WHEN tier_code <= {TIER_CODE[STRONG]} THEN '{CERTAIN}' ELSE '{UNCERTAIN}' END")


def update_links(conn: sqlite3.Connection, rows: Iterable[tuple[str, str | None, str, int]]) -> None:
    """Store what linking found for references: rows of (ref_tier, target_uid, certainty, ref_id). The certainty
    is the tier's (CERTAIN for PROVEN and STRONG), which is why it is not stored."""
    conn.executemany("UPDATE st_ref SET tier_code = ?, target_uid = ? WHERE ref_id = ?",
                     [(TIER_CODE[tier], target, ref_id) for tier, target, _certainty, ref_id in rows])


def update_link_codes(conn: sqlite3.Connection, rows: Iterable[tuple[int, str | None, int]]) -> None:
    """``update_links`` for rows that already hold the tier's code: (tier_code, target_uid, ref_id)."""
    conn.executemany("UPDATE st_ref SET tier_code = ?, target_uid = ? WHERE ref_id = ?", rows)


def create(conn: sqlite3.Connection) -> None:
    for statement in DDL.split(";"):
        if statement.strip():
            conn.execute(statement)


#: The secondary indexes, by name. A cold build drops them and creates them once at the end (inside the same
#: transaction, so a crash or rollback leaves them as they were): filling the tables first and sorting once is
#: about twice as fast as keeping the B-trees up to date row by row.
INDEXES: dict[str, str] = {
    statement.split(" IF NOT EXISTS ", 1)[1].split(" ", 1)[0]: statement.strip()
    for statement in DDL.split(";") if statement.strip().startswith("CREATE INDEX")
    and "st_def_snapshot" not in statement  # snapshots are written after the indexes are back
}


#: Indexes that linking, contexts, anchors and snapshots look rows up by. The others index columns those steps
#: rewrite (qualified names, targets) or only queries use, so a cold build creates them after the steps.
LINK_INDEXES = frozenset({
    "st_file_language", "st_module_key_file", "st_def_file", "st_import_file", "st_import_target", "st_import_alt",
    "st_import_resolved", "st_import_resolved_alt", "st_ref_file", "st_export_entry_file", "st_export_thunk_file",
    "st_scope_file", "st_bind_file",  # Go linking walks each file's scopes and bindings
})


def drop_indexes(conn: sqlite3.Connection) -> None:
    for name in INDEXES:
        conn.execute(f"DROP INDEX IF EXISTS {name}")


def create_indexes(conn: sqlite3.Connection, *, for_linking: bool | None = None, sort_threads: int = 0) -> None:
    """All secondary indexes (``None``), only the ones linking needs (``True``) or only the others (``False``).

    ``sort_threads``: helper threads SQLite may use to sort each index's keys (``PRAGMA threads``), for when
    another core is idle; restored afterwards.
    """
    previous = int(conn.execute("PRAGMA threads").fetchone()[0])
    if sort_threads:
        conn.execute(f"PRAGMA threads = {int(sort_threads)}")
    try:
        for name, statement in INDEXES.items():
            if for_linking is None or (name in LINK_INDEXES) == for_linking:
                conn.execute(statement)
    finally:
        if sort_threads:
            conn.execute(f"PRAGMA threads = {previous}")


def drop(conn: sqlite3.Connection) -> None:
    for table in TABLES:
        conn.execute(f"DROP TABLE IF EXISTS {table}")
