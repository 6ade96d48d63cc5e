; PHP
(namespace_definition name: (namespace_name) @package)
(function_definition name: (name) @name) @definition.function
(class_declaration name: (name) @name) @definition.class
(interface_declaration name: (name) @name) @definition.interface
(trait_declaration name: (name) @name) @definition.trait
(enum_declaration name: (name) @name) @definition.enum
(method_declaration name: (name) @name) @definition.method
(property_element name: (variable_name) @name) @definition.field
(const_element (name) @name) @definition.constant

(function_definition) @scope.function
(method_declaration) @scope.function
(anonymous_function) @scope.function
(arrow_function) @scope.closure
(class_declaration body: (declaration_list) @scope.class)

(simple_parameter name: (variable_name) @local.param)
(variadic_parameter name: (variable_name) @local.param)
(anonymous_function_use_clause (variable_name) @local.param)
(assignment_expression left: (variable_name) @local.definition)
(foreach_statement (pair (variable_name) @local.definition (variable_name) @local.definition))
(foreach_statement (variable_name) (variable_name) @local.definition)

(variable_name) @reference
(member_access_expression object: (_) @receiver name: (name) @member)
(member_call_expression object: (_) @receiver name: (name) @member)

(namespace_use_declaration) @import
(expression_statement [(require_expression) (require_once_expression) (include_expression)
                       (include_once_expression)]) @import
