; C++ additions to c.scm
(namespace_definition name: (_) @name) @container.namespace
(class_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.class
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.class
(function_definition declarator: (function_declarator declarator: (field_identifier) @name)) @definition.function
(function_definition declarator: (function_declarator
  declarator: (qualified_identifier scope: (_) @owner name: (identifier) @name))) @definition.method
(function_definition declarator: (function_declarator
  declarator: (qualified_identifier name: (qualified_identifier name: (identifier) @name)) @owner)) @definition.method
(function_definition declarator: (function_declarator declarator: (qualified_identifier
  name: (qualified_identifier name: (qualified_identifier name: (identifier) @name))) @owner)) @definition.method
(function_definition declarator: (function_declarator
  declarator: (qualified_identifier scope: (_) @owner name: (destructor_name) @name))) @definition.method
(function_definition declarator: (function_declarator
  declarator: (qualified_identifier name: (qualified_identifier name: (destructor_name) @name)) @owner)) @definition.method
(field_declaration declarator: (field_identifier) @name) @definition.field
(field_declaration declarator: (function_declarator declarator: (field_identifier) @name)) @definition.method
(alias_declaration name: (type_identifier) @name) @definition.type
(class_specifier body: (field_declaration_list) @scope.class)
(struct_specifier body: (field_declaration_list) @scope.class)
(lambda_expression) @scope.function
(for_range_loop) @scope.block
(catch_clause) @scope.block
(for_range_loop declarator: (_) @local.definition)
(qualified_identifier scope: (namespace_identifier) @reference)
(field_initializer (field_identifier) @reference)
(using_declaration) @import
