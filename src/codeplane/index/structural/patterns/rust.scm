; Rust
(function_item name: (identifier) @name) @definition.function
(function_signature_item name: (identifier) @name) @definition.function
(struct_item name: (type_identifier) @name) @definition.struct
(enum_item name: (type_identifier) @name) @definition.enum
(union_item name: (type_identifier) @name) @definition.struct
(trait_item name: (type_identifier) @name) @definition.trait
(type_item name: (type_identifier) @name) @definition.type
(associated_type name: (type_identifier) @name) @definition.type
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.static
(mod_item name: (identifier) @name body: (declaration_list)) @definition.module
(macro_definition name: (identifier) @name) @definition.macro
(enum_variant name: (identifier) @name) @definition.enum_member
(field_declaration name: (field_identifier) @name) @definition.field
(impl_item type: [(type_identifier) @name (generic_type type: (type_identifier) @name)]) @container.impl

(function_item) @scope.function
(closure_expression) @scope.function
(impl_item) @scope.impl
(trait_item) @scope.trait
(mod_item body: (declaration_list)) @scope.module
(block) @scope.block
(for_expression) @scope.block
(if_expression) @scope.block
(while_expression) @scope.block
(match_arm) @scope.block

(parameter pattern: (_) @local.param)
(closure_parameters (_) @local.param)
(let_declaration pattern: (_) @local.definition)
(for_expression pattern: (_) @local.definition)
(match_arm pattern: (_) @local.definition)
(let_condition pattern: (_) @local.definition)

(identifier) @reference
(type_identifier) @reference
;; ``let T { f } = x``: the shorthand key declares the variable ``f`` (and names the field: ``short:`` shape)
(field_pattern (shorthand_field_identifier) @reference)
(field_expression value: (_) @receiver field: (field_identifier) @member)
;; ``a::b::f`` / ``Type::new``: the last segment is a member of the path (resolved by rustlink.py)
(scoped_identifier path: (_) @receiver name: (identifier) @member)
(scoped_type_identifier path: (_) @receiver name: (type_identifier) @member)
;; ``T { f: v }`` / ``let T { f: p } = x``: the key is a field of the struct named before it (``struct:`` shape)
(struct_expression name: (_) @receiver body: (field_initializer_list (field_initializer field: (field_identifier) @member)))
(struct_pattern type: (_) @receiver (field_pattern name: (field_identifier) @member))

(use_declaration) @import
(mod_item !body) @import
