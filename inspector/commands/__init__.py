"""One module per `context-inspector` subcommand; each has `add_arguments(parser)` and `run(args) -> int`."""
