"""Which JSX tags are repository components whose props parameter a member family types (for ``typedkeys.py``).

``<Badge label="new" />`` calls ``Badge`` with ``{ label: "new" }``. Where the index links the tag's name (through
its import) to ``function Badge({ label }: BadgeProps)`` or ``const Badge = (props: BadgeProps) => ...``, tsc checks
the attribute against ``BadgeProps``, so renaming ``BadgeProps.label`` renames it too. Only a first parameter
annotated with one bare type name of the family counts, as for a typed object literal, or the type argument of a
function component's declared type (``const Badge: React.FC<BadgeProps> = ...``, also ``FunctionComponent``), or the
first type argument of a class component's base (``class Badge extends React.Component<BadgeProps>``, also
``PureComponent``); wrapped components (``memo(...)``) are not followed, nor ``this.props.label`` in a class component:
their attributes and members stay low candidates.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from codeplane.refactor.facts import Def, FactReader
from codeplane.refactor.lexical import syntax_root
from codeplane.refactor.spans import SourceText
from codeplane.refactor.typedkeys import bare_type_name, component_props

#: Tiers of a link the index proved or followed through imports: the tag is that definition.
_RESOLVED = frozenset({"PROVEN", "STRONG"})
_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function"})
_PARAMETERS = frozenset({"required_parameter", "optional_parameter"})


def typed_components(reader: FactReader, text: Callable[[str], SourceText | None],
                     owners: frozenset[str]) -> Callable[[str, int, int], bool] | None:
    """Whether the JSX tag name at ``(path, line, column)`` resolves to a component whose props parameter is typed
    by one of ``owners``; ``None`` without owners (nothing can be typed by the family)."""
    if not owners:
        return None
    typed: dict[str, bool] = {}

    def judge(path: str, line: int, column: int) -> bool:
        ref = next((r for r in reader.refs_on_line(path, line) if r.column == column), None)
        if ref is None or ref.target_uid is None or ref.tier not in _RESOLVED:
            return False
        if ref.target_uid not in typed:
            typed[ref.target_uid] = _props_typed(reader.get_def(ref.target_uid), text, owners)
        return typed[ref.target_uid]
    return judge


def _props_typed(component: Def | None, text: Callable[[str], SourceText | None], owners: frozenset[str]) -> bool:
    src = text(component.path) if component is not None else None
    root = syntax_root(src.data, src.path) if src is not None else None
    if component is None or src is None or root is None:
        return False
    start = len(src.text[:src.offset(component.name_line, component.name_column)].encode("utf-8"))
    name = root.descendant_for_byte_range(start, start + len(component.name.encode("utf-8")))
    if name is not None and name.parent is not None and name.parent.type == "class_declaration":
        return bare_type_name(_class_props(name.parent), src.data) in owners
    parameters = _parameters(name)
    first = parameters.named_children[0] if parameters is not None and parameters.named_child_count else None
    return first is not None and first.type in _PARAMETERS and \
        bare_type_name(first.child_by_field_name("type") or component_props(first), src.data) in owners


#: React's component base classes, by their last name: their first type argument types the props.
_COMPONENT_CLASSES = frozenset({"Component", "PureComponent"})


def _class_props(declaration: Any) -> Any:
    """``P`` of ``class Badge extends React.Component<P, S>`` (or ``PureComponent<P>``), else ``None``."""
    heritage = next((c for c in declaration.named_children if c.type == "class_heritage"), None)
    extends = next((c for c in heritage.named_children if c.type == "extends_clause"), None) if heritage else None
    if extends is None or extends.named_child_count != 2:
        return None
    base, arguments = extends.named_children
    if base.type == "member_expression":
        base = base.child_by_field_name("property")
    if base is None or base.text is None or base.text.decode("utf-8") not in _COMPONENT_CLASSES or \
            arguments.type != "type_arguments" or not arguments.named_child_count:
        return None
    return arguments.named_children[0]


def _parameters(name: Any) -> Any:
    """The formal parameters of the function ``name`` names: a declaration's, or a variable's function value's."""
    holder = name.parent if name is not None else None
    if holder is None or not _named_by(holder, name):
        return None
    if holder.type == "function_declaration":
        return holder.child_by_field_name("parameters")
    value = holder.child_by_field_name("value") if holder.type == "variable_declarator" else None
    while value is not None and value.type == "parenthesized_expression" and value.named_child_count == 1:
        value = value.named_children[0]
    return value.child_by_field_name("parameters") if value is not None and value.type in _FUNCTION_VALUES else None


def _named_by(holder: Any, name: Any) -> bool:
    field = holder.child_by_field_name("name")
    return field is not None and field.id == name.id
