"""Small utilities shared by the core and plugins."""
