; Kotlin (the grammar has few field names, so children are matched by type)
(package_header (identifier) @package)
(class_declaration (type_identifier) @name) @definition.class
(object_declaration (type_identifier) @name) @definition.object
(function_declaration (simple_identifier) @name) @definition.function
(source_file (property_declaration (variable_declaration (simple_identifier) @name)) @definition.property)
(class_body (property_declaration (variable_declaration (simple_identifier) @name)) @definition.property)
(class_parameter (binding_pattern_kind) (simple_identifier) @name) @definition.property
(type_alias (type_identifier) @name) @definition.type
(enum_entry (simple_identifier) @name) @definition.constant

(class_body) @scope.class
(function_declaration) @scope.function
(lambda_literal) @scope.function
(anonymous_function) @scope.function
(statements) @scope.block
(for_statement) @scope.block
(catch_block) @scope.block

(parameter (simple_identifier) @local.param)
(lambda_parameters (variable_declaration (simple_identifier) @local.param))
(statements (property_declaration (variable_declaration (simple_identifier) @local.definition)))
(for_statement (variable_declaration (simple_identifier) @local.definition))
(catch_block (simple_identifier) @local.param)

(simple_identifier) @reference
(type_identifier) @reference
(navigation_expression (_) @receiver (navigation_suffix (simple_identifier) @member))

(import_header) @import
