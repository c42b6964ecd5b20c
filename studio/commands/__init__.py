"""The command line's parts that ``studio.cli`` (the parser and dispatcher) delegates to, one
module each, so that ``cli.py`` stays a table of commands. Nothing here imports ``studio.cli``.
"""
