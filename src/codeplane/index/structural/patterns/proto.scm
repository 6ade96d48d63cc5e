; Protocol Buffers
(package (full_ident) @package)
(message (message_name (identifier) @name)) @definition.message
(enum (enum_name (identifier) @name)) @definition.enum
(service (service_name (identifier) @name)) @definition.service
(rpc (rpc_name (identifier) @name)) @definition.method
(message) @scope.class
(service) @scope.class
(import) @import
