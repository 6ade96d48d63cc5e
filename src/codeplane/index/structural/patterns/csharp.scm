; C#
(namespace_declaration name: (_) @name) @container.namespace
; Only a file-scoped namespace is the file's package; a block namespace is a container in lexical paths.
(file_scoped_namespace_declaration name: (_) @package)
(class_declaration name: (identifier) @name) @definition.class
(struct_declaration name: (identifier) @name) @definition.struct
(interface_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(record_declaration name: (identifier) @name) @definition.record
(delegate_declaration name: (identifier) @name) @definition.delegate
(method_declaration name: (identifier) @name) @definition.method
(local_function_statement name: (identifier) @name) @definition.function
(constructor_declaration name: (identifier) @name) @definition.constructor
(property_declaration name: (identifier) @name) @definition.property
(field_declaration (variable_declaration (variable_declarator name: (identifier) @name))) @definition.field
(event_field_declaration (variable_declaration (variable_declarator name: (identifier) @name))) @definition.event
; a positional record's parameters are its properties (``record R(int A)``: ``r.A``)
(record_declaration (parameter_list (parameter name: (identifier) @name) @definition.property))
(enum_member_declaration name: (identifier) @name) @definition.constant

(class_declaration body: (declaration_list) @scope.class)
(struct_declaration body: (declaration_list) @scope.class)
(interface_declaration body: (declaration_list) @scope.class)
(record_declaration body: (declaration_list) @scope.class)
(method_declaration) @scope.function
(constructor_declaration) @scope.function
(local_function_statement) @scope.function
(lambda_expression) @scope.function
(block) @scope.block
(for_statement) @scope.block
(foreach_statement) @scope.block
(catch_clause) @scope.block
(using_statement) @scope.block

(parameter name: (identifier) @local.param)
(local_declaration_statement (variable_declaration (variable_declarator name: (identifier) @local.definition)))
(foreach_statement left: (identifier) @local.definition)
(catch_declaration name: (identifier) @local.param)

(type_parameter name: (identifier) @local.param)

(identifier) @reference
; ``this``/``base`` are anonymous nodes, so the receiver is any node (``_``), not only named ones.
(member_access_expression expression: _ @receiver name: (identifier) @member)
; ``A.B.C`` as a type: the last segment is a member of what precedes it (kept plain in usings and namespaces).
(qualified_name qualifier: (_) @receiver name: (identifier) @member)

(using_directive) @import
