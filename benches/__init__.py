"""The repoctx benchmark harness: `python -m benches --help`."""
