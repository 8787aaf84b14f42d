"""Shared plumbing every surface imports, owning: the one error base (errors.py), the registry's
vocabulary (command.py), which directory is the root (rootfind.py), the workspace and its path gate
(workspace.py), the confined file layer every repository read and write goes through (fs.py,
dirhandle.py), the one write lock and multi-file transactions (locks.py, journal.py), the tables of
the tree (index.py), the manifests of a directory (manifests.py), control's result envelope
(results.py), the clock, token counting and plural words."""
