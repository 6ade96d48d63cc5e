; Java
(package_declaration [(identifier) (scoped_identifier)] @package)
(class_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(record_declaration name: (identifier) @name) @definition.record
(annotation_type_declaration name: (identifier) @name) @definition.interface
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.constructor
(field_declaration declarator: (variable_declarator name: (identifier) @name)) @definition.field
(enum_constant name: (identifier) @name) @definition.constant

(class_body) @scope.class
(interface_body) @scope.class
(enum_body) @scope.class
(method_declaration) @scope.function
(constructor_declaration) @scope.function
(lambda_expression) @scope.function
(block) @scope.block
(for_statement) @scope.block
(enhanced_for_statement) @scope.block
(catch_clause) @scope.block
(try_with_resources_statement) @scope.block

(formal_parameter name: (identifier) @local.param)
(spread_parameter (variable_declarator name: (identifier) @local.param))
(lambda_expression parameters: (identifier) @local.param)
(inferred_parameters (identifier) @local.param)
(catch_formal_parameter name: (identifier) @local.param)
(local_variable_declaration declarator: (variable_declarator name: (identifier) @local.definition))
(enhanced_for_statement name: (identifier) @local.definition)
(resource name: (identifier) @local.definition)

; Type parameters bind their names (in the scope around a generic class, or in the generic method).
(type_parameter (type_identifier) @local.param)

(identifier) @reference
(type_identifier) @reference
; ``Outer.Inner`` / ``a.b.C`` as a type: the last segment is a member of what precedes it, never a plain name.
(scoped_type_identifier (_) @receiver . (type_identifier) @member .)
(field_access object: (_) @receiver field: (identifier) @member)
(method_invocation object: (_) @receiver name: (identifier) @member)
(method_invocation !object name: (identifier) @member)
; ``Item::price``: the method a method reference names is a member of what precedes ``::``.
(method_reference (_) @receiver . (identifier) @member .)

(import_declaration) @import
