"""Tasks: given a task in words, the files and regions of the repository that matter for it,
ranked with one line each on why, and their text cut to a token budget (`task_context`,
`repoctx context`). Ranking is the Rust core's (rust/tasks/): a lexical index of the source,
the definitions the task names, the import graph, the scopes, artifacts and project.yaml
written about the code, and git's history; each works alone, none is required. `file_outline` (`repoctx outline`) gives one file's
definitions with their lines, the shape task context cuts it along."""

# What registry/catalog.py loads of this package.
MODULES = {"commands": ("context", "outline")}
CLI_WORDS = {"context": "context", "outline": "outline"}
