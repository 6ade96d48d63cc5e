; Go
(package_clause (package_identifier) @package)
(function_declaration name: (identifier) @name) @definition.function
(method_declaration
  receiver: (parameter_list (parameter_declaration type: [(type_identifier) @owner
                                                          (pointer_type (type_identifier) @owner)
                                                          (generic_type type: (type_identifier) @owner)
                                                          (pointer_type (generic_type type: (type_identifier) @owner))]))
  name: (field_identifier) @name) @definition.method
(type_spec name: (type_identifier) @name type: (struct_type)) @definition.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface
(type_spec name: (type_identifier) @name) @definition.type
(type_alias name: (type_identifier) @name) @definition.type
(source_file (var_declaration (var_spec name: (identifier) @name) @definition.variable))
(source_file (var_declaration (var_spec_list (var_spec name: (identifier) @name) @definition.variable)))
;; const_spec with a field name matches only its first name (`const X, Y = 1, 2`); its other identifiers are names too
(source_file (const_declaration (const_spec (identifier) @name) @definition.constant))
(method_elem name: (field_identifier) @name) @definition.method
(field_declaration name: (field_identifier) @name) @definition.field
; an embedded field (``Embedded``, ``*pkg.Ptr``) is named by its type
(field_declaration !name type: (type_identifier) @name) @definition.field
(field_declaration !name type: (qualified_type name: (type_identifier) @name)) @definition.field
(field_declaration !name type: (generic_type type: (type_identifier) @name)) @definition.field
(field_declaration !name type: (generic_type type: (qualified_type name: (type_identifier) @name))) @definition.field

(function_declaration) @scope.function
(method_declaration) @scope.function
(func_literal) @scope.function
(block) @scope.block
(if_statement) @scope.block
(for_statement) @scope.block
(expression_switch_statement) @scope.block
(type_switch_statement) @scope.block
(select_statement) @scope.block
(expression_case) @scope.block
(type_case) @scope.block
(communication_case) @scope.block
(default_case) @scope.block

(parameter_declaration name: (identifier) @local.param)
(variadic_parameter_declaration name: (identifier) @local.param)
(short_var_declaration left: (expression_list (identifier) @local.definition))
(statement_list (var_declaration (var_spec name: (identifier) @local.definition)))
(statement_list (var_declaration (var_spec_list (var_spec name: (identifier) @local.definition))))
(statement_list (const_declaration (const_spec (identifier) @local.definition)))
(range_clause left: (expression_list (identifier) @local.definition))

(identifier) @reference
(type_identifier) @reference
(selector_expression operand: (_) @receiver field: (field_identifier) @member)
; ``pkg.T`` in a type: ``T`` is a member of the package, never the file's own ``T``; the package name is a ref
; (cross-file linking matches it with the file's imports).
(qualified_type package: (package_identifier) @receiver name: (type_identifier) @member)
(qualified_type package: (package_identifier) @reference)
; ``T{Name: v}``: a struct literal's key is a field (a map literal's key expression is rarely a bare name),
; so it is a member without a known receiver, not the package-level ``Name``.
(keyed_element key: (literal_element (identifier) @member))
; ``pkg.T{Name: v}`` / ``&T{Name: v}``: the key is a field of the type the literal names (``struct:`` shape)
(composite_literal type: (_) @receiver body: (literal_value (keyed_element key: (literal_element (identifier) @member))))

(import_spec) @import
