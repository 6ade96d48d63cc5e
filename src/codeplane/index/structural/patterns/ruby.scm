; Ruby
(class name: [(constant) (scope_resolution)] @name) @definition.class
(module name: [(constant) (scope_resolution)] @name) @definition.module
(method name: (_) @name) @definition.method
(singleton_method name: (_) @name) @definition.method
(assignment left: (constant) @name) @definition.constant

(class) @scope.class
(module) @scope.module
(method) @scope.function
(singleton_method) @scope.function
(block) @scope.block
(do_block) @scope.block
(lambda) @scope.function

(method_parameters (_) @local.param)
(block_parameters (_) @local.param)
(lambda_parameters (_) @local.param)
(assignment left: (identifier) @local.definition)
(operator_assignment left: (identifier) @local.definition)

(identifier) @reference
(constant) @reference
(call receiver: (_) @receiver method: (identifier) @member)

((call method: (identifier) @_m arguments: (argument_list (string)))
  (#match? @_m "^(require|require_relative|load)$")) @import
