"""Names a language binds before any file does, which a rename must not capture (issue 9 item 1, QA45 F1).

Go's universe scope (``len``, ``string``, ``nil``, …), Python's builtins, the ECMAScript/DOM/Node globals of
TypeScript's ``lib.d.ts`` (``Math``, ``JSON``, ``console``, …), Rust's prelude and primitive types (``Option``,
``Some``, ``Vec``, ``u8``, …) and Java's ``java.lang`` types (imported into every file implicitly): none is a
binding of the repository, so the scope checks of :mod:`collisions` never see them. A definition renamed onto one
hides it wherever the new binding is visible, and every use there then denotes the renamed definition
(``len(r.queries)`` calling ``uniqueVars``; ``Math.PI`` reading a property of the class ``Square``).

A clash is reported only where the new binding really captures a use: an unresolved, non-member use of the
name (how the index records a use of a predeclared name) where the new binding is visible:

- a top-level definition: its file and the files whose edits import it under the new name; in Go every file of
  the package (an external ``package p_test`` aside), in Java every file of the package (a class of the
  package hides the ``java.lang`` one there);
- a local: the scopes inside the one that binds it.

Members are looked up in their object, never in the scopes (a Go method or a TypeScript class member named
``len``/``Math`` is fine), and are not checked. Go's ``init`` is a clash at package level whatever the uses: a
package-level ``init`` must be a function without parameters or results, which Go calls itself and nothing may
refer to.
"""

from __future__ import annotations

import builtins
import posixpath
from collections.abc import Iterable

from codeplane.refactor.facts import Def, FactReader, Ref
from codeplane.refactor.gopackage import package_names

_LIMIT = 10_000


def _names(text: str) -> frozenset[str]:
    """A table written as words (shorter to read and to diff than a list of string literals)."""
    return frozenset(text.split())


_GO = _names(
    "bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string uint uint8 "
    "uint16 uint32 uint64 uintptr any comparable true false iota nil append cap clear close complex copy delete "
    "imag len make max min new panic print println real recover")
_PYTHON = frozenset(name for name in dir(builtins) if not name.startswith("_")) | {"__name__", "__file__"}
_JS = _names(
    # ECMAScript standard built-in objects and functions
    "globalThis Infinity NaN undefined eval isFinite isNaN parseFloat parseInt decodeURI decodeURIComponent "
    "encodeURI encodeURIComponent escape unescape Object Function Boolean Symbol Error AggregateError EvalError "
    "RangeError ReferenceError SyntaxError TypeError URIError Number BigInt Math Date String RegExp Array "
    "Int8Array Uint8Array Uint8ClampedArray Int16Array Uint16Array Int32Array Uint32Array Float32Array "
    "Float64Array BigInt64Array BigUint64Array Map Set WeakMap WeakSet WeakRef FinalizationRegistry ArrayBuffer "
    "SharedArrayBuffer DataView Atomics JSON Promise Proxy Reflect Intl Iterator "
    # lib.es5.d.ts utility types and interfaces a type position reads unqualified
    "Partial Required Readonly Pick Record Exclude Extract Omit NonNullable Parameters ReturnType InstanceType "
    "Awaited PromiseLike ArrayLike Iterable IterableIterator AsyncIterable ReadonlyArray TemplateStringsArray "
    "PropertyKey PropertyDescriptor ThisType Uppercase Lowercase Capitalize Uncapitalize "
    # DOM and Node globals
    "window document self navigator location history localStorage sessionStorage console fetch Request Response "
    "Headers URL URLSearchParams FormData Blob File FileReader Event EventTarget CustomEvent AbortController "
    "AbortSignal WebSocket Worker Element HTMLElement Node NodeList XMLHttpRequest TextEncoder TextDecoder "
    "setTimeout clearTimeout setInterval clearInterval setImmediate clearImmediate queueMicrotask structuredClone "
    "requestAnimationFrame cancelAnimationFrame alert confirm prompt atob btoa crypto performance process "
    "Buffer global require module exports __dirname __filename")
_RUST = _names(
    "Copy Send Sized Sync Unpin Drop Fn FnMut FnOnce drop Box ToOwned Clone PartialEq PartialOrd Eq Ord AsRef "
    "AsMut Into From Default Iterator Extend IntoIterator DoubleEndedIterator ExactSizeIterator Option Some None "
    "Result Ok Err String ToString Vec TryFrom TryInto FromIterator bool char str i8 i16 i32 i64 i128 isize u8 "
    "u16 u32 u64 u128 usize f32 f64")
#: ``java.lang``'s public types (Java SE 17), which every compilation unit imports on demand.
_JAVA = _names(
    "Appendable AutoCloseable CharSequence Cloneable Comparable Iterable Readable Runnable Boolean Byte Character "
    "Class ClassLoader ClassValue Compiler Double Enum Float InheritableThreadLocal Integer Long Math Module "
    "ModuleLayer Number Object Package Process ProcessBuilder ProcessHandle Record Runtime RuntimePermission "
    "SecurityManager Short StackTraceElement StackWalker StrictMath String StringBuffer StringBuilder System "
    "Thread ThreadGroup ThreadLocal Throwable Void ArithmeticException ArrayIndexOutOfBoundsException "
    "ArrayStoreException ClassCastException ClassNotFoundException CloneNotSupportedException "
    "EnumConstantNotPresentException Exception IllegalAccessException IllegalArgumentException "
    "IllegalCallerException IllegalMonitorStateException IllegalStateException IllegalThreadStateException "
    "IndexOutOfBoundsException InstantiationException InterruptedException LayerInstantiationException "
    "NegativeArraySizeException NoSuchFieldException NoSuchMethodException NullPointerException "
    "NumberFormatException ReflectiveOperationException RuntimeException SecurityException "
    "StringIndexOutOfBoundsException TypeNotPresentException UnsupportedOperationException AbstractMethodError "
    "AssertionError BootstrapMethodError ClassCircularityError ClassFormatError Error ExceptionInInitializerError "
    "IllegalAccessError IncompatibleClassChangeError InstantiationError InternalError LinkageError "
    "NoClassDefFoundError NoSuchFieldError NoSuchMethodError OutOfMemoryError StackOverflowError ThreadDeath "
    "UnknownError UnsatisfiedLinkError UnsupportedClassVersionError VerifyError VirtualMachineError Deprecated "
    "FunctionalInterface Override SafeVarargs SuppressWarnings")
_JS_SUFFIXES = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
_JAVA_TYPES = frozenset({"class", "interface", "enum", "record", "annotation"})
_MEMBER_KINDS = frozenset({"method", "field", "property", "constructor", "enum_member"})


def _table(path: str) -> tuple[str, frozenset[str]] | None:
    if path.endswith(".go"):
        return "Go's predeclared", _GO
    if path.endswith((".py", ".pyi")):
        return "Python's builtin", _PYTHON
    if path.endswith(_JS_SUFFIXES):
        return "the global", _JS
    if path.endswith(".rs"):
        return "Rust's prelude", _RUST
    if path.endswith(".java"):
        return "java.lang's", _JAVA
    return None


def predeclared_clashes(reader: FactReader, target: Def, new_name: str, member: bool,
                        edit_paths: Iterable[str]) -> list[tuple[tuple[str, int, int], str]]:
    """Where renaming ``target`` (a class member when ``member``) to ``new_name`` captures a use of a predeclared
    name: ``((path, line, column), detail)`` per captured use, sorted; empty when nothing is captured."""
    table = _table(target.path)
    if table is None or member or target.kind in _MEMBER_KINDS:
        return []
    what, names = table
    go_package_level = target.path.endswith(".go") and "." not in target.lexical_path
    if go_package_level and new_name == "init":
        return [((target.path, target.name_line, target.name_column),
                 f"a package-level init must be a function without parameters or results, called by Go itself and "
                 f"never by name: {target.qualified_name} cannot be renamed init")]
    if new_name not in names or (target.path.endswith(".java") and target.kind not in _JAVA_TYPES):
        return []  # Java: fields, methods and locals live apart from the types java.lang supplies
    top_level = target.scope_id is None or _is_top(reader, target.scope_id)
    if top_level:
        paths = {target.path, *edit_paths}
        if go_package_level:
            paths |= _go_package_files(reader, target)
        elif target.path.endswith(".java"):
            paths |= {f.path for f in reader.files() if f.path.endswith(".java")
                      and posixpath.dirname(f.path) == posixpath.dirname(target.path)}
        uses = [r for r in reader.refs_named(new_name, sorted(paths), _LIMIT) if _predeclared_use(r)]
    else:
        uses = [r for r in reader.refs_named(new_name, [target.path], _LIMIT)
                if _predeclared_use(r) and _inside(reader, r, target.scope_id)]
    by_file: dict[str, list[Ref]] = {}
    for ref in sorted(uses, key=lambda r: (r.path, r.line, r.column)):
        by_file.setdefault(ref.path, []).append(ref)
    # One clash per file, at its first captured use (the answer stays short on a package full of ``String``).
    return [((refs[0].path, refs[0].line, refs[0].column),
             f"{target.qualified_name} renamed {new_name} hides {what} {new_name}, which {len(refs)} use(s) in "
             f"{path} mean; they would denote the renamed definition instead")
            for path, refs in by_file.items()]


def _predeclared_use(ref: Ref) -> bool:
    """A use the index could bind to nothing of the repository: how it records a predeclared name."""
    return ref.role == "REFERENCE" and not ref.is_member and ref.target_uid is None and ref.bind_id is None


def _is_top(reader: FactReader, scope_id: int) -> bool:
    scope = reader.scope(scope_id)
    return scope is None or scope.parent_id is None


def _inside(reader: FactReader, ref: Ref, scope_id: int | None) -> bool:
    current, depth = ref.scope_id, 0
    while current is not None and depth < 64:
        if current == scope_id:
            return True
        scope = reader.scope(current)
        current, depth = (scope.parent_id if scope is not None else None), depth + 1
    return False


def _go_package_files(reader: FactReader, target: Def) -> set[str]:
    """The ``.go`` files of the target's package (an external test package, ``package p_test``, is another)."""
    package_dir = posixpath.dirname(target.path)
    found: set[str] = set()
    for info in reader.files():
        if not info.path.endswith(".go") or posixpath.dirname(info.path) != package_dir:
            continue
        if info.path.endswith("_test.go") and package_names(reader.imports_in_file(info.path, _LIMIT), package_dir):
            continue
        found.add(info.path)
    return found
