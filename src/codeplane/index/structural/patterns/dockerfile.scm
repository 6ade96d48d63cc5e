; Dockerfile: build stages; base images are imports.
(from_instruction as: (image_alias) @name) @definition.stage
(from_instruction) @import
