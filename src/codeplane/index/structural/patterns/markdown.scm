; Markdown: headings are the document's "definitions"; sections nest them.
(atx_heading heading_content: (_) @name) @definition.heading
(setext_heading heading_content: (_) @name) @definition.heading
