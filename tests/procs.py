"""Child processes as Linux's /proc shows them (the signal and kill tests of the
sweep and warmup command lines)."""
import os


def _stat(pid):
    """The fields of /proc/PID/stat after the command name (state first), or None."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def alive(pid) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    st = _stat(pid)
    return st is not None and st[0] != "Z"


def children(pid) -> list:
    """The live (non-zombie) child processes of ``pid``."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            st = _stat(d)
            if st is not None and st[1] == str(pid) and st[0] != "Z":
                out.append(int(d))
    return out
