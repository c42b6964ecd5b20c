"""The project document: its dataclasses, the versioned JSON file (schema, loader, migrations)
and the templates a new project starts from."""
