; C++ additions to c.scm
(namespace_definition name: (_) @name) @container.namespace
(class_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.class
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.class
; A nested class defined apart (`struct DBImpl::Writer { ... };`) is `DBImpl.Writer`.
(class_specifier name: (qualified_identifier scope: (_) @owner name: (type_identifier) @name)
  body: (field_declaration_list)) @definition.class
(struct_specifier name: (qualified_identifier scope: (_) @owner name: (type_identifier) @name)
  body: (field_declaration_list)) @definition.class
(function_definition declarator: (function_declarator declarator: (field_identifier) @name)) @definition.function
; A name behind the return type's `*`, `**` or `&` (`const std::string& path() const`, `Node* Graph::node()`) is the
; same definition.
(function_definition declarator: [
  (pointer_declarator declarator: (function_declarator declarator: (field_identifier) @name))
  (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (field_identifier) @name)))
  (reference_declarator (function_declarator declarator: (field_identifier) @name))]) @definition.function
(function_definition declarator: (reference_declarator (function_declarator declarator: (identifier) @name)))
  @definition.function
(function_definition declarator: [
  (pointer_declarator declarator: (function_declarator
    declarator: (qualified_identifier scope: (_) @owner name: (identifier) @name)))
  (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator
    declarator: (qualified_identifier scope: (_) @owner name: (identifier) @name))))
  (reference_declarator (function_declarator
    declarator: (qualified_identifier scope: (_) @owner name: (identifier) @name)))]) @definition.method
(function_definition declarator: [
  (pointer_declarator declarator: (function_declarator
    declarator: (qualified_identifier name: (qualified_identifier name: (identifier) @name)) @owner))
  (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator
    declarator: (qualified_identifier name: (qualified_identifier name: (identifier) @name)) @owner)))
  (reference_declarator (function_declarator
    declarator: (qualified_identifier name: (qualified_identifier name: (identifier) @name)) @owner))]) @definition.method
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
(field_declaration declarator: (function_declarator declarator: (field_identifier) @name)) @definition.method
; Method declarations behind `*`, `**` or `&` (`virtual Node* next() = 0;`); fields are in c.scm but a reference.
(field_declaration declarator: (reference_declarator (field_identifier) @name)) @definition.field
(field_declaration declarator: [
  (pointer_declarator declarator: (function_declarator declarator: (field_identifier) @name))
  (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (field_identifier) @name)))
  (reference_declarator (function_declarator declarator: (field_identifier) @name))]) @definition.method
(alias_declaration name: (type_identifier) @name) @definition.type
; A namespace's variables and constants (`namespace geo { constexpr int kScale = 2; }`); file scope is in c.scm.
(namespace_definition body: (declaration_list
  (declaration declarator: (init_declarator declarator: (identifier) @name)) @definition.variable))
(namespace_definition body: (declaration_list (declaration declarator: (identifier) @name) @definition.variable))
(class_specifier body: (field_declaration_list) @scope.class)
(struct_specifier body: (field_declaration_list) @scope.class)
(lambda_expression) @scope.function
(for_range_loop) @scope.block
(catch_clause) @scope.block
(for_range_loop declarator: (_) @local.definition)
(qualified_identifier scope: (namespace_identifier) @reference)
(field_initializer (field_identifier) @reference)
(using_declaration) @import
