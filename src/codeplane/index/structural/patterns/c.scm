; C (C++ adds cpp.scm)
(function_definition declarator: (function_declarator declarator: (identifier) @name)) @definition.function
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
  @definition.function
(function_definition declarator: (pointer_declarator declarator: (pointer_declarator
  declarator: (function_declarator declarator: (identifier) @name)))) @definition.function
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @definition.enum
; `typedef struct { ... } grid;`: the typedef names the struct, whose fields are `grid`'s members.
(type_definition type: [(struct_specifier !name body: (field_declaration_list))
                        (union_specifier !name body: (field_declaration_list))]
  declarator: (type_identifier) @name) @definition.struct
(type_definition declarator: (type_identifier) @name) @definition.type
; A struct's (a class's) fields, also behind `*`, `**` or `[N]` (`Edge* in_edge_;`, `char name[16];`).
(field_declaration declarator: (field_identifier) @name) @definition.field
(field_declaration declarator: [
  (pointer_declarator declarator: (field_identifier) @name)
  (pointer_declarator declarator: (pointer_declarator declarator: (field_identifier) @name))
  (array_declarator declarator: (field_identifier) @name)
  (pointer_declarator declarator: (array_declarator declarator: (field_identifier) @name))]) @definition.field
; A function pointer field, `int (*open)(const char *path);`.
(field_declaration declarator: (function_declarator
  declarator: (parenthesized_declarator (pointer_declarator declarator: (field_identifier) @name))))
  @definition.field
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
; A designated initializer's field, `{.x = 1}`: a member of the type initialised (its shape, `init:point.a`).
(field_designator (field_identifier) @member) @receiver

(preproc_include) @import
