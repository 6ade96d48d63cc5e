"""What a query-driven language is made of (``generic.py`` runs it): the ``LanguageSpec`` switches and the
``Context`` that import/export hooks write into."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tree_sitter import Node

from codeplane.index.structural.facts import CERTAIN, ExportRow, ImportRow, ThunkRow
from codeplane.index.structural.identity import UidAllocator
from codeplane.index.structural.source import SourceText


@dataclass(frozen=True)
class ImportBinding:
    """An import row and the identifier node (if any) that binds a local name to it."""

    row: ImportRow
    name_node: Node | None
    #: The imported name as written when an alias binds it (``{ a as b }``: ``a``); a cross-file reference.
    original: Node | None = None


@dataclass
class Context:
    """What language hooks see: the source, the uid allocator and the scope finder."""

    src: SourceText
    uids: UidAllocator
    scope_of: Callable[[Node], int]
    imports: list[ImportBinding] = field(default_factory=list)
    exports: list[ExportRow] = field(default_factory=list)
    thunks: list[ThunkRow] = field(default_factory=list)

    def add_import(self, statement: Node, name_node: Node | None, *, name: str, alias: str | None,
                   source: str | None, kind: str, original: Node | None = None) -> ImportRow:
        row = ImportRow(self.uids.import_uid(source, name, alias), self.scope_of(statement), name, alias, source, kind,
                        CERTAIN, *self.src.span(statement))
        self.imports.append(ImportBinding(row, name_node, original))
        return row


@dataclass(frozen=True)
class LanguageSpec:
    language: str
    patterns: tuple[str, ...]
    #: Def kinds that hold members (a function directly inside becomes a ``method``).
    class_kinds: frozenset[str] = frozenset({"class", "interface", "struct", "trait", "enum", "object", "module"})
    #: Whether names bound in a class body are visible unqualified inside its methods (Java, C#, Kotlin).
    members_visible: bool = False
    #: Whether a member defined outside its class (C++ ``int K::size() { return limit; }``) sees the members of
    #: the class of that name in the same file, as a method written inside it does, and a method sees the members
    #: of the base classes the file defines (``struct D : B``; a template's base ``B<T>`` is not looked in).
    owner_members_visible: bool = False
    #: Parent node types of a name that denotes a member of the enclosing class whatever a local of that name says
    #: (C++'s member initialiser ``: algo(algo)`` sets the field ``algo`` from the parameter ``algo``).
    member_name_parents: frozenset[str] = frozenset()
    #: Whether file-level definitions may be resolved (False where macros or globals can rebind them).
    resolve_file_scope: bool = True
    #: Def kinds whose names are lexical bindings of their scope, visible throughout it (hoisted).
    binding_kinds: frozenset[str] = frozenset({"function", "class"})
    #: Node types whose end makes a local declaration visible (``let x = x + 1`` reads the outer x).
    declaration_types: frozenset[str] = frozenset()
    imports: Callable[[Context, Node], None] | None = None
    #: Records ExportRows from the tree, given file-scope bindings name -> (target kind, uid).
    exports: Callable[[Context, Node, dict[str, tuple[str, str | None]]], None] | None = None
    receiver_shapes: dict[str, str] = field(default_factory=dict)
    #: Node types that are names; a ``@local.*`` capture of another type is a pattern to expand.
    identifier_types: frozenset[str] = frozenset({"identifier"})
    #: Names a destructuring pattern declares (default: every identifier-typed descendant).
    pattern_names: Callable[[Node], list[Node]] | None = None
    #: Scope kinds that ``@local.var`` declarations (JS ``var``) bind in, skipping blocks.
    function_scopes: frozenset[str] = frozenset({"function", "file"})
    #: Scope kinds that do not see their enclosing scopes' locals (Ruby ``def``, PHP functions).
    opaque_scopes: frozenset[str] = frozenset()
    #: Whether a second assignment to a local names the same variable (Ruby, PHP) rather than a new one.
    rebinding_is_assignment: bool = False
    #: Node types of a declaration without a body that another declaration of the name completes (TypeScript's
    #: overload signatures ``function f(a: string): string;`` before ``function f(a: any) {...}``): one name. C++
    #: lists its field declarations: two of one name in a class can only be ``#if`` alternatives.
    overload_types: frozenset[str] = frozenset()
    #: Node types of declarations that name only a type and merge with the other declarations of their name in
    #: the scope (TypeScript's ``interface Thing`` beside ``const Thing``, ``type T`` beside ``const T``): one
    #: symbol, denoted by its value declaration (else by its first one), not rival declarations.
    merging_types: frozenset[str] = frozenset()
    #: Whether a name used before its block's declaration of it denotes the outer one (Rust ``let x = x.f();``,
    #: Go ``x := x.f()``), rather than being left unresolved (JavaScript's ``let`` is not yet initialised there).
    shadowing_falls_through: bool = False
    #: Whether a function sees a binding its enclosing scope declares after it (JavaScript: ``function get() {
    #: return CONFIG.x }`` then ``const CONFIG = ...``: the body runs later). Compiled languages refuse such a use.
    closures_see_later_bindings: bool = False
    #: Names looked up lexically through every scope, opaque ones and class bodies included, from a function
    #: whenever it runs (Ruby's constants: ``CONFIG`` in a ``def`` is the file's or the class's ``CONFIG``).
    lexical_constant: Callable[[str], bool] | None = None
    #: Whether a ``@member`` capture is one (False: it stays a plain name, e.g. a Rust ``use`` path's leaf).
    member_kept: Callable[[Node], bool] | None = None
    #: The receiver shape of a member whose receiver is a path (Rust ``a::b::f``: ``path:a::b``), else None.
    path_shape: Callable[[Node], str | None] | None = None
    #: The shape of a member written without a receiver (Java's ``m()`` is ``bare.``, not an expression's).
    bare_member_shape: str = "expr."
    #: A shape for a plain name that a cross-file linker reads (the declared type ``type:T`` of a Java/C#
    #: variable, a PHP name's context ``class:``/``fn:``/``const:``), else None.
    plain_shape: Callable[[Node], str | None] | None = None
    #: The same for a name at file scope without one (C++: the namespace its body holds it in, ``n:a::b``).
    file_scope_shape: Callable[[Node], str | None] | None = None
    #: The same for a declared name (a definition's, a local's, a parameter's) without one: C/C++ ``type:T``, the
    #: class its declaration gives it, for the refactor planner. Asked of declared names only: most names are not.
    declared_shape: Callable[[Node], str | None] | None = None
    #: Whether a ``@local.param`` capture binds in the function's scope (C/C++: not the parameters of a parameter's
    #: function type, ``void (*deleter)(const Slice& key)``, which would make ``key`` a second parameter).
    binds_param: Callable[[Node], bool] | None = None


