"""Streams of TestFloat lines: `write_vectors` (generation to a binary file,
chunk by chunk) and `verify_stream` (checking lines read from a binary file,
chunk by chunk, with absolute line numbers in errors and records)."""
from __future__ import annotations


from .cases import operands
from .expected import generate
from .lineio import MAX_LINE_BYTES, format_lines, parse_lines
from .names import parse_function
from .options import Options, make_options
from .verify import Report, verify

__all__ = ["write_vectors", "verify_stream"]


def write_vectors(function, file, *, level=1, n=None, seed=1, exhaustive=False, offset=0,
                  chunk=1 << 20, operands_only=False, prefix=None,
                  options: Options | None = None, **opts) -> int:
    """Write TestFloat lines for ``function`` to a binary file object, chunk by
    chunk; returns the number of lines written (arguments as in `generate`)."""
    fn = parse_function(function)
    if prefix is not None:
        file.write(prefix.encode() + b"\n")
    count = 0
    if operands_only:
        for _, ops in operands(fn, level=level, n=n, seed=seed, exhaustive=exhaustive,
                               offset=offset, chunk=chunk):
            file.write(format_lines(fn, ops))
            count += ops[0].size
        return count
    for c in generate(fn, level=level, n=n, seed=seed, exhaustive=exhaustive, offset=offset,
                      chunk=chunk, options=options, **opts):
        file.write(format_lines(fn, c.operands, c.result, c.flags))
        count += c.result.size
    return count


def verify_stream(function, file, *, chunk_lines=1 << 20, errors=20, check_nans=False,
                  check_inv_ints=False, options: Options | None = None, **opts) -> Report:
    """`verify` over TestFloat lines read from a binary file object, chunk by
    chunk (about ``chunk_lines`` lines at a time; memory stays bounded: a line
    longer than `MAX_LINE_BYTES` raises ValueError naming it)."""
    fn = parse_function(function)
    o = make_options(options, opts)
    if not isinstance(chunk_lines, int) or isinstance(chunk_lines, bool) or chunk_lines < 1:
        raise ValueError(f"chunk_lines must be a positive int, got {chunk_lines!r}")
    total = None
    start = 0
    line = 1                                  # number of the chunk's first line
    size = max(chunk_lines * 24, MAX_LINE_BYTES)
    rest = b""
    while True:
        buf = file.read(size)
        if isinstance(buf, str):
            raise TypeError("verify_stream reads a binary file (open(..., 'rb'), "
                            "sys.stdin.buffer)")
        if not buf:
            data, rest = rest, b""
        else:
            buf = rest + buf
            cut = buf.rfind(b"\n") + 1
            data, rest = buf[:cut], buf[cut:]
            if len(rest) > MAX_LINE_BYTES:
                # bounded memory: a line longer than any valid one is refused at once
                no = line + data.count(b"\n")
                raise ValueError(f"line {no}: longer than {MAX_LINE_BYTES} bytes; "
                                 f"not a TestFloat line")
        if not data:
            if not buf:
                break
            continue
        ops, res, flg = parse_lines(fn, data, first_line=line)
        line += data.count(b"\n")
        rep = verify(fn, *ops, result=res, flags=flg, options=o, check_nans=check_nans,
                     check_inv_ints=check_inv_ints, errors=errors, start=start)
        start += res.size
        total = rep if total is None else total.merge(rep)
        if not buf:
            break
    if total is None:
        total = Report(fn.name, dict(o.as_dict(), check_nans=check_nans,
                                     check_inv_ints=check_inv_ints), errors=errors)
    return total

