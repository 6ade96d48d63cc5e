; C (C++ adds cpp.scm)
(function_definition declarator: (function_declarator declarator: (identifier) @name)) @definition.function
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
  @definition.function
(function_definition declarator: (pointer_declarator declarator: (pointer_declarator
  declarator: (function_declarator declarator: (identifier) @name)))) @definition.function
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @definition.enum
(type_definition declarator: (type_identifier) @name) @definition.type
(preproc_def name: (identifier) @name) @definition.macro
(preproc_function_def name: (identifier) @name) @definition.macro
(enumerator name: (identifier) @name) @definition.constant
(translation_unit (declaration declarator: (init_declarator declarator: (identifier) @name)) @definition.variable)
(translation_unit (declaration declarator: (identifier) @name) @definition.variable)

(function_definition) @scope.function
(compound_statement) @scope.block
(for_statement) @scope.block

(parameter_declaration declarator: (_) @local.param)
(declaration declarator: (_) @local.definition)
(for_statement initializer: (declaration declarator: (_) @local.definition))

(identifier) @reference
(type_identifier) @reference
(field_expression argument: (_) @receiver field: (field_identifier) @member)

(preproc_include) @import
