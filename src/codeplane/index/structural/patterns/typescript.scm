; TypeScript and TSX additions to ecmascript.scm.
(abstract_class_declaration name: (_) @name) @definition.class
(interface_declaration name: (_) @name) @definition.interface
(type_alias_declaration name: (_) @name) @definition.type
(enum_declaration name: (_) @name) @definition.enum
(enum_body name: (property_identifier) @name @definition.constant)
(enum_body (enum_assignment name: (property_identifier) @name) @definition.constant)
(internal_module name: (_) @name) @definition.module
(function_signature name: (identifier) @name) @definition.function
(method_signature name: (_) @name) @definition.method
(abstract_method_signature name: (_) @name) @definition.method
(public_field_definition name: (_) @name) @definition.field
(property_signature name: (_) @name) @definition.field
(interface_body) @scope.class
; A signature's parameters (an overload, a method of a declaration, a function type ``(options: O) => void``) are
; its own: bound in the enclosing scope, they made that scope's real ``options`` ambiguous.
(function_signature) @scope.function
(method_signature) @scope.function
(abstract_method_signature) @scope.function
(call_signature) @scope.function
(construct_signature) @scope.function
(function_type) @scope.function
(constructor_type) @scope.function
(type_identifier) @reference
; ``Kind.Alpha`` / ``ns.Type`` in a type: a member of ``Kind``, as the value ``Kind.Alpha`` is (a plain ``Alpha``
; resolved to nothing and its rename missed it).
(nested_type_identifier module: (_) @receiver name: (type_identifier) @member)
; A constructor's parameter properties (``constructor(private readonly x: number)``) declare fields of the class
; (``@in_class``: owned by the class around the constructor, not by the constructor).
(method_definition
  name: (property_identifier) @_ctor (#eq? @_ctor "constructor")
  parameters: (formal_parameters
    [(required_parameter (accessibility_modifier) pattern: (identifier) @name)
     (optional_parameter (accessibility_modifier) pattern: (identifier) @name)
     (required_parameter "readonly" pattern: (identifier) @name)
     (optional_parameter "readonly" pattern: (identifier) @name)] @definition.field @in_class))
