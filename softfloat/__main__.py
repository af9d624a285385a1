"""Command line: ``python -m softfloat <command> ...``.

Commands are looked up lazily so that one command's imports never slow another.
"""
import importlib
import sys

COMMANDS = {
    "sweep": ("softfloat.sweep", "main", "exhaustive or sharded sweeps of an operation against an oracle"),
    "testfloat": ("softfloat.testfloat", "main", "TestFloat-compatible test vectors: gen and ver"),
    "verify": ("softfloat.verification", "main", "check any implementation against the library, with a diagnosis"),
    "demo": ("softfloat.demo", "main", "the worked examples: how values round into fp16 and bf16"),
    "warmup": ("softfloat.warmup", "main", "compile the kernels now (--all: every one), cached for later"),
}


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m softfloat <command> [options]\n\ncommands:")
        for name, (_, _, help_) in COMMANDS.items():
            print(f"  {name:10s} {help_}")
        return 0 if argv else 2
    cmd = argv.pop(0)
    if cmd not in COMMANDS:
        print(f"unknown command {cmd!r}; expected one of {sorted(COMMANDS)}", file=sys.stderr)
        return 2
    mod, fn, _ = COMMANDS[cmd]
    from . import _cli_start
    try:
        run = getattr(importlib.import_module(mod), fn)
        _cli_start.restore_sigint()          # the command's own code: KeyboardInterrupt
        return int(run(argv) or 0)
    except KeyboardInterrupt:                # one line, never a traceback
        print(f"\n{cmd}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:                  # `... | head`: end quietly
        try:
            import os
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except OSError:
            pass
        return 0


if __name__ == "__main__":
    sys.exit(main())
