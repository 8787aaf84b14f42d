"""msgspec Structs for every file format repoctx reads or writes."""
