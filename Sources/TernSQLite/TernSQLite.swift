// The SQLite store, in Core Data's own layout.
