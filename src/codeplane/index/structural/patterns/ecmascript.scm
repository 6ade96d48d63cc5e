; JavaScript core (shared with TypeScript and TSX). Earlier patterns win when two capture the same node.

; -- definitions ------------------------------------------------------------------------------------
(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(class_declaration name: (_) @name) @definition.class
(method_definition name: (_) @name) @definition.method
(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function) (class)]) @definition.function
(program (lexical_declaration (variable_declarator name: (identifier) @name) @definition.variable))
(program (variable_declaration (variable_declarator name: (identifier) @name) @definition.variable))
(program (export_statement declaration: (lexical_declaration
  (variable_declarator name: (identifier) @name) @definition.variable)))
; CommonJS: ``exports.f = function ...``, ``module.exports.f = ...`` and ``module.exports = { f: function ... }``
; define ``f`` (a function when the value is one; before the plainer patterns, which would take the same node).
(program (expression_statement (assignment_expression
  left: (member_expression object: (identifier) @_exports property: (property_identifier) @name)
  right: [(function_expression) (arrow_function) (generator_function) (class)]) @definition.function)
  (#eq? @_exports "exports"))
(program (expression_statement (assignment_expression
  left: (member_expression object: (member_expression object: (identifier) @_module property: (property_identifier) @_exports)
                           property: (property_identifier) @name)
  right: [(function_expression) (arrow_function) (generator_function) (class)]) @definition.function)
  (#eq? @_module "module") (#eq? @_exports "exports"))
; (a value, not a name: ``exports.f = f`` exports the local ``f``, which is the definition)
(program (expression_statement (assignment_expression
  left: (member_expression object: (identifier) @_exports property: (property_identifier) @name)
  right: [(string) (template_string) (number) (true) (false) (null) (regex) (object) (array) (new_expression)
          (call_expression)]) @definition.variable)
  (#eq? @_exports "exports"))
(program (expression_statement (assignment_expression
  left: (member_expression object: (member_expression object: (identifier) @_module property: (property_identifier) @_exports)
                           property: (property_identifier) @name)
  right: [(string) (template_string) (number) (true) (false) (null) (regex) (object) (array) (new_expression)
          (call_expression)]) @definition.variable)
  (#eq? @_module "module") (#eq? @_exports "exports"))
(program (expression_statement (assignment_expression
  left: (member_expression object: (identifier) @_module property: (property_identifier) @_exports)
  right: (object (pair key: (property_identifier) @name
                       value: [(function_expression) (arrow_function) (generator_function) (class)]) @definition.function)))
  (#eq? @_module "module") (#eq? @_exports "exports"))
; ``const { a, b: bee } = obj`` / ``const [c, d] = arr`` at module level: each name the pattern declares.
(program (lexical_declaration (variable_declarator name: [(object_pattern) (array_pattern)] @names) @definition.variable))
(program (variable_declaration (variable_declarator name: [(object_pattern) (array_pattern)] @names) @definition.variable))
(program (export_statement declaration: (lexical_declaration
  (variable_declarator name: [(object_pattern) (array_pattern)] @names) @definition.variable)))

; -- scopes -----------------------------------------------------------------------------------------
(function_declaration) @scope.function
(generator_function_declaration) @scope.function
(function_expression) @scope.function
(generator_function) @scope.function
(arrow_function) @scope.function
(method_definition) @scope.function
(class_body) @scope.class
(statement_block) @scope.block
(for_statement) @scope.block
(for_in_statement) @scope.block
(catch_clause) @scope.block
(switch_body) @scope.block

; -- bindings ---------------------------------------------------------------------------------------
(formal_parameters (_) @local.param)
(arrow_function parameter: (identifier) @local.param)
(catch_clause parameter: (_) @local.param)
(lexical_declaration (variable_declarator name: (_) @local.definition))
(variable_declaration (variable_declarator name: (_) @local.var))
(for_in_statement left: (identifier) @local.var)
(for_in_statement left: [(object_pattern) (array_pattern)] @local.definition)

; -- references -------------------------------------------------------------------------------------
(identifier) @reference
(shorthand_property_identifier) @reference
(shorthand_property_identifier_pattern) @reference
(member_expression object: (_) @receiver property: (property_identifier) @member)
; an assignment's target (``this.count = 0``, ``obj.x = 1``): a member store, role DEFINITION as in Python
(assignment_expression left: (member_expression object: (_) @receiver property: (property_identifier) @member.store))

; -- imports and re-exports -------------------------------------------------------------------------
(import_statement) @import
(export_statement source: (string)) @import
; CommonJS: ``const``/``let``/``var x = require("m")`` and ``= require("m").y`` bind ``x``.
(lexical_declaration (variable_declarator
  value: (call_expression function: (identifier) @_require arguments: (arguments (string)))
  (#eq? @_require "require"))) @import
(variable_declaration (variable_declarator
  value: (call_expression function: (identifier) @_require arguments: (arguments (string)))
  (#eq? @_require "require"))) @import
(lexical_declaration (variable_declarator
  value: (member_expression object: (call_expression function: (identifier) @_require arguments: (arguments (string))))
  (#eq? @_require "require"))) @import
(variable_declaration (variable_declarator
  value: (member_expression object: (call_expression function: (identifier) @_require arguments: (arguments (string))))
  (#eq? @_require "require"))) @import
; Any other ``require(...)`` and ``import(...)`` call (a bare statement, an argument, a computed name): an import of
; the module its literal names, or of none (a dynamic import, which makes a selection through it partial).
(call_expression function: (identifier) @_require (#eq? @_require "require")) @import
(call_expression function: (import)) @import
; A test's way past its own mocks: ``jest.requireActual("m")``, ``vi.importActual("m")`` (and their *Mock twins).
(call_expression function: (member_expression object: (identifier) @_runner property: (property_identifier) @_load)
  (#match? @_runner "^(jest|vi)$") (#match? @_load "^(requireActual|requireMock|importActual|importMock)$")) @import
; ``await vi.importActual<{ W: number }>('m')``: with type arguments, tree-sitter-typescript parses the call's
; function as ``await vi.importActual`` (the ``await`` binds inside), so the call above never matched (QA s53).
(call_expression function: (await_expression (member_expression object: (identifier) @_runner
                                                               property: (property_identifier) @_load))
  (#match? @_runner "^(jest|vi)$") (#match? @_load "^(requireActual|requireMock|importActual|importMock)$")) @import
