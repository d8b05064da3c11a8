"""Compiling a frame to SQL: ``compile`` (the entry), ``compile_named`` (named places), ``sqlparts`` (the pieces
both use)."""
