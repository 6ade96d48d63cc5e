; PHP
(namespace_definition name: (namespace_name) @package)
(function_definition name: (name) @name) @definition.function
(class_declaration name: (name) @name) @definition.class
(interface_declaration name: (name) @name) @definition.interface
(trait_declaration name: (name) @name) @definition.trait
(enum_declaration name: (name) @name) @definition.enum
(method_declaration name: (name) @name) @definition.method
; A property is named without its ``$`` (``$this->n`` spells ``n``).
(property_element name: (variable_name (name) @name)) @definition.field
(const_element (name) @name) @definition.constant

(function_definition) @scope.function
(method_declaration) @scope.function
(anonymous_function) @scope.function
(arrow_function) @scope.closure
(class_declaration body: (declaration_list) @scope.class)
(anonymous_class body: (declaration_list) @scope.class)

(simple_parameter name: (variable_name) @local.param)
(variadic_parameter name: (variable_name) @local.param)
(anonymous_function_use_clause (variable_name) @local.param)
(assignment_expression left: (variable_name) @local.definition)
(foreach_statement (pair (variable_name) @local.definition (variable_name) @local.definition))
(foreach_statement (variable_name) (variable_name) @local.definition)

(variable_name) @reference
(member_access_expression object: (_) @receiver name: (name) @member)
(member_call_expression object: (_) @receiver name: (name) @member)
(scoped_call_expression scope: (_) @receiver name: (name) @member)
(class_constant_access_expression (_) @receiver . (name) @member .)
; A static property, ``self::$n``/``K::$n``, is named without its ``$`` like its declaration; not a variable.
(scoped_property_access_expression scope: (_) @receiver name: (variable_name (name) @member))

; Class, function and constant names (the last segment of a qualified name); ``phplink`` reads their context
; and qualifier from the shape (``adapters/scripting.py``). A namespace's name marks where it is in effect.
(namespace_definition name: (namespace_name) @reference)
(object_creation_expression [(name) @reference (qualified_name (name) @reference) (relative_name (name) @reference)])
(scoped_call_expression scope: [(name) @reference (qualified_name (name) @reference) (relative_name (name) @reference)])
(scoped_property_access_expression scope: [(name) @reference (qualified_name (name) @reference)])
(class_constant_access_expression . [(name) @reference (qualified_name (name) @reference) (relative_name (name) @reference)])
(base_clause [(name) @reference (qualified_name (name) @reference)])
(class_interface_clause [(name) @reference (qualified_name (name) @reference)])
(use_declaration [(name) @reference (qualified_name (name) @reference)])
(named_type [(name) @reference (qualified_name (name) @reference)])
(binary_expression right: [(name) @reference (qualified_name (name) @reference)])
(binary_expression left: [(name) @reference (qualified_name (name) @reference)])
(function_call_expression function: [(name) @reference (qualified_name (name) @reference) (relative_name (name) @reference)])
(argument [(name) @reference (qualified_name (name) @reference)])
; a constant wherever else an expression stands (``return LIMIT;``, ``$x = LIMIT;``, ``[LIMIT]``, ``case LIMIT:``):
; only operands and arguments were references, so a rename of ``LIMIT`` missed these
(return_statement [(name) @reference (qualified_name (name) @reference)])
(assignment_expression right: [(name) @reference (qualified_name (name) @reference)])
(echo_statement [(name) @reference (qualified_name (name) @reference)])
(array_element_initializer [(name) @reference (qualified_name (name) @reference)])
(conditional_expression [(name) @reference (qualified_name (name) @reference)])
(parenthesized_expression [(name) @reference (qualified_name (name) @reference)])
(unary_op_expression argument: [(name) @reference (qualified_name (name) @reference)])
(subscript_expression [(name) @reference (qualified_name (name) @reference)])
(case_statement value: [(name) @reference (qualified_name (name) @reference)])
(simple_parameter default_value: [(name) @reference (qualified_name (name) @reference)])
(const_element (name) [(name) @reference (qualified_name (name) @reference)])
(namespace_use_clause . [(name) @reference (qualified_name (name) @reference)])

(namespace_use_declaration) @import
(expression_statement [(require_expression) (require_once_expression) (include_expression)
                       (include_once_expression)]) @import
