"""braid's exceptions: one class per braid::StatusCode, each also deriving from
the builtin exception a Python caller would catch for that kind of error."""

from __future__ import annotations


class Error(Exception):
    """Any error braid reports; the message is braid's own."""


class InvalidArgumentError(Error, ValueError):
    """Bad input: a malformed model, a wrong shape, an unknown option."""


class NotFoundError(Error, LookupError):
    """A missing file, input, output or op."""


class UnimplementedError(Error, NotImplementedError):
    """An unsupported op, opset or feature."""


class OutOfRangeError(Error, IndexError):
    """An index or offset outside its container."""


class DataLossError(Error):
    """A truncated or corrupt file."""


class FailedPreconditionError(Error, RuntimeError):
    """A call made in the wrong state (e.g. a trace before any traced run)."""


class ResourceExhaustedError(Error, MemoryError):
    """An allocation failed."""


class UnavailableError(Error, RuntimeError):
    """A device is absent (e.g. "cuda" on a machine without a GPU)."""


class InternalError(Error, RuntimeError):
    """A bug in braid: please report it."""


# Shown as braid.InvalidArgumentError etc. in tracebacks: the package is the public face.
for _cls in (Error, InvalidArgumentError, NotFoundError, UnimplementedError, OutOfRangeError,
             DataLossError, FailedPreconditionError, ResourceExhaustedError, UnavailableError,
             InternalError):
    _cls.__module__ = "braid"
del _cls
