"""Go methods that implement a standard-library interface, for renaming one: ``func (r *Router) ServeHTTP(w
http.ResponseWriter, req *http.Request)`` makes ``*Router`` an ``http.Handler`` implicitly, and nothing in the
repository names the link. After the rename the type stops being one: the build breaks where it is converted
(``*Router does not implement http.Handler``), and where it is only passed as ``any`` (``fmt`` looking for
``String``, ``encoding/json`` for ``MarshalJSON``) behaviour changes silently. gopls refuses the first case.

A method matches when its name is one an interface of the table requires and the types its signature spells
on the name's line (the index's references there, package qualifiers aside) are the interface's, in order.
"""

from __future__ import annotations

from codeplane.refactor.facts import Def, FactReader, Ref

#: Method name → (interface, the types of its signature in order: parameters, then results) for each
#: standard-library interface that types commonly satisfy.
_REQUIRED: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "String": (("fmt.Stringer", ("string",)),),
    "GoString": (("fmt.GoStringer", ("string",)),),
    "Format": (("fmt.Formatter", ("State", "rune")),),
    "Error": (("error", ("string",)),),
    "Unwrap": (("errors.Unwrap", ("error",)),),
    "Is": (("errors.Is", ("error", "bool")),),
    "ServeHTTP": (("http.Handler", ("ResponseWriter", "Request")),),
    "RoundTrip": (("http.RoundTripper", ("Request", "Response", "error")),),
    "Read": (("io.Reader", ("byte", "int", "error")),),
    "Write": (("io.Writer", ("byte", "int", "error")),),
    "ReadAt": (("io.ReaderAt", ("byte", "int64", "int", "error")),),
    "WriteAt": (("io.WriterAt", ("byte", "int64", "int", "error")),),
    "Close": (("io.Closer", ("error",)),),
    "Seek": (("io.Seeker", ("int64", "int", "int64", "error")),),
    "ReadFrom": (("io.ReaderFrom", ("Reader", "int64", "error")),),
    "WriteTo": (("io.WriterTo", ("Writer", "int64", "error")),),
    "ReadByte": (("io.ByteReader", ("byte", "error")),),
    "WriteByte": (("io.ByteWriter", ("byte", "error")),),
    "ReadRune": (("io.RuneReader", ("rune", "int", "error")),),
    "WriteString": (("io.StringWriter", ("string", "int", "error")),),
    "Len": (("sort.Interface", ("int",)),),
    "Less": (("sort.Interface", ("int", "int", "bool")),),
    "Swap": (("sort.Interface", ("int", "int")),),
    "MarshalJSON": (("json.Marshaler", ("byte", "error")),),
    "UnmarshalJSON": (("json.Unmarshaler", ("byte", "error")),),
    "MarshalText": (("encoding.TextMarshaler", ("byte", "error")),),
    "UnmarshalText": (("encoding.TextUnmarshaler", ("byte", "error")),),
    "MarshalBinary": (("encoding.BinaryMarshaler", ("byte", "error")),),
    "UnmarshalBinary": (("encoding.BinaryUnmarshaler", ("byte", "error")),),
    "MarshalXML": (("xml.Marshaler", ("Encoder", "StartElement", "error")),),
    "UnmarshalXML": (("xml.Unmarshaler", ("Decoder", "StartElement", "error")),),
    "Scan": (("sql.Scanner", ("any", "error")), ("sql.Scanner", ("error",)),
             ("fmt.Scanner", ("ScanState", "rune", "error"))),
    "Value": (("driver.Valuer", ("Value", "error")),),
}


def std_interface(reader: FactReader, target: Def) -> str | None:
    """The standard-library interface whose method the Go method ``target`` (of a non-interface type) is, by name
    and signature, else ``None``."""
    if target.language != "go" or target.kind != "method" or target.parent_uid is not None \
            or target.name not in _REQUIRED:
        return None
    spelled = _signature_types(list(reader.refs_on_line(target.path, target.name_line)), target)
    return next((iface for iface, types in _REQUIRED[target.name] if spelled == types), None)


def _signature_types(refs: list[Ref], target: Def) -> tuple[str, ...] | None:
    """The type names a method's signature spells after its name (its parameters' scope; a qualifier ``http.``
    dropped), or ``None`` when the name's reference is not on the line."""
    name = next((r for r in refs if r.role == "DEFINITION" and r.column == target.name_column), None)
    if name is None:
        return None
    spelled = sorted((r for r in refs if r.column > name.column and r.scope_id == name.scope_id
                      and r.role == "REFERENCE"), key=lambda r: r.column)
    qualifiers = {(r.line, r.column) for r in spelled if not r.is_member
                  and any(m.is_member and m.column == r.end_column + 1 for m in spelled)}
    return tuple(r.token for r in spelled if (r.line, r.column) not in qualifiers)
