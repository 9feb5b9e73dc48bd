"""CLI commands: one module per ``sdckit`` command.

Every module here (except those starting with ``_``) defines ``register(app)``, which adds its
command(s) to the Typer app; :mod:`sdckit.cli` discovers and registers them all, so adding a
command means adding a module, not editing the CLI entry point.
"""
