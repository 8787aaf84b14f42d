"""Shared plumbing every surface imports: the command vocabulary, the workspace and its confined file layer,
locks and transactions, the clock, token counting, and the tables of the tree."""
