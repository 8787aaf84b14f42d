"""Control (ctxt): what repoctx serves and whether it holds, proposals, runs and client set-up."""
