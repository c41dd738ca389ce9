"""`NamedTuple` without `typing`: importing `typing` costs a start ~3 ms of CPU, with
the `contextlib` and `warnings` it imports (a sixth of what `write` adds to a bare start).

`class Row(NamedTuple): ...` here makes the class `typing.NamedTuple` makes: a
`collections.namedtuple` of the annotated fields, with the class body's defaults,
methods, properties and docstring. One difference: its `__annotations__` are left as
the strings `from __future__ import annotations` makes them, where `typing` compiles
each into a `ForwardRef` (~0.1 ms a class); `typing.get_type_hints` reads either.
mypy reads `typing.NamedTuple` itself.
"""

from __future__ import annotations

import collections

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple as NamedTuple
else:
    # what a class body may not define, and what it defines that the named tuple keeps
    # its own of (as `typing` has them)
    _PROHIBITED = frozenset({"__new__", "__init__", "__slots__", "__getnewargs__", "_fields",
                             "_field_defaults", "_make", "_replace", "_asdict", "_source"})
    _SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})

    class _Maker(type):
        def __new__(cls, name, bases, space):
            if not bases:  # `NamedTuple` itself
                return super().__new__(cls, name, bases, space)
            if bases != (NamedTuple,):
                raise TypeError(f"{name}: a named tuple derives from NamedTuple alone")
            fields = dict(space.get("__annotations__", {}))
            defaults = [field for field in fields if field in space]
            if defaults:
                late = [field for field in fields if field not in space
                        and list(fields).index(field) > list(fields).index(defaults[0])]
                if late:
                    raise TypeError(f"{name}: the field {late[0]!r} without a default "
                                    f"follows one with a default ({defaults[0]!r})")
            made = collections.namedtuple(name, list(fields),
                                          defaults=[space[field] for field in defaults],
                                          module=space["__module__"])
            made.__annotations__ = fields
            for key, value in space.items():
                if key in _PROHIBITED:
                    raise AttributeError(f"{name}: a named tuple cannot define {key}")
                if key not in _SPECIAL and key not in fields:
                    setattr(made, key, value)
            return made

    class NamedTuple(metaclass=_Maker):
        """The base of a named tuple class (see the module's docstring)."""
