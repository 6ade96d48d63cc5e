; JavaScript-only nodes.
(field_definition property: (_) @name) @definition.field
