"""Checking a data record against its schema when it is loaded: types, non-empty lists,
non-null values, regular expressions that compile (with the groups the code reads), known
values of an enumeration, and no unknown key.

A schema is a tree of :class:`Spec` (:class:`Fields` for a mapping with fixed keys,
:class:`Table` for one with free keys, :class:`Items` for a list, :class:`Text`,
:class:`Flag`, :class:`Count`, :class:`Number`, :class:`OneOf`; :class:`Either` for the first
of several that fits).
:func:`check` refuses the first value that does not fit with one message naming the file,
the dotted key and what is expected there, e.g. ``data/families/openmpi.yaml:
recognise.tools: expected a non-empty list of (a non-empty string), got [] (empty)``.
The records that use it: the MPI families (:mod:`omb_suite.mpi.families`), the launcher
dialects (:mod:`omb_suite.mpi.dialects`), the algorithm tables (:mod:`omb_suite.mpi.tables`) and the
known hangs (:mod:`omb_suite.mpi.known_hangs`).
Cross-references between records (a family's dialect, its table, the family it derives
from) are checked by the module that owns the record.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


class RecordError(ValueError):
    """A record whose value at a key is not what its schema expects."""


@dataclass(frozen=True)
class Spec:
    """What a value must be; ``nullable``: ``null`` is allowed too."""

    nullable: bool = False

    def expected(self) -> str:
        raise NotImplementedError

    def problem(self, value: Any) -> str | None:
        """Why ``value`` does not fit (one level), ``None`` if it does."""
        raise NotImplementedError

    def describe(self) -> str:
        return self.expected() + (' or null' if self.nullable else '')


@dataclass(frozen=True)
class Text(Spec):
    """A non-empty string; ``pattern``: a regular expression with at least ``groups``
    groups (the code reads ``match.group(1)``)."""

    pattern: bool = False
    groups: int = 0

    def expected(self) -> str:
        if self.pattern:
            return ('a regular expression' +
                    (f' with {self.groups} group(s)' if self.groups else ''))
        return 'a non-empty string'

    def problem(self, value: Any) -> str | None:
        if not isinstance(value, str) or not value:
            return 'not a non-empty string'
        if self.pattern:
            try:
                compiled = re.compile(value)
            except re.error as err:
                return f'does not compile ({err})'
            if compiled.groups < self.groups:
                return f'has {compiled.groups} group(s)'
        return None


@dataclass(frozen=True)
class Flag(Spec):
    def expected(self) -> str:
        return 'true or false'

    def problem(self, value: Any) -> str | None:
        return None if isinstance(value, bool) else 'not a boolean'


@dataclass(frozen=True)
class Count(Spec):
    """A whole number, at least 1."""

    def expected(self) -> str:
        return 'a whole number >= 1'

    def problem(self, value: Any) -> str | None:
        ok = isinstance(value, int) and not isinstance(value, bool) and value >= 1
        return None if ok else 'not a whole number >= 1'


@dataclass(frozen=True)
class Number(Spec):
    """A whole number, at least ``minimum`` (an algorithm's number in the library's enum)."""

    minimum: int = 0

    def expected(self) -> str:
        return f'a whole number >= {self.minimum}'

    def problem(self, value: Any) -> str | None:
        ok = isinstance(value, int) and not isinstance(value, bool) and value >= self.minimum
        return None if ok else f'not a whole number >= {self.minimum}'


@dataclass(frozen=True)
class OneOf(Spec):
    """One of a fixed set of strings."""

    values: tuple[str, ...] = ()

    def expected(self) -> str:
        return 'one of ' + ', '.join(repr(v) for v in self.values)

    def problem(self, value: Any) -> str | None:
        return None if value in self.values else 'not a known value'


@dataclass(frozen=True)
class Items(Spec):
    """A list of ``of``; ``empty``: the list may be empty."""

    of: Spec = field(default_factory=Text)
    empty: bool = False

    def expected(self) -> str:
        return f"a {'' if self.empty else 'non-empty '}list of ({self.of.describe()})"

    def problem(self, value: Any) -> str | None:
        if not isinstance(value, list):
            return 'not a list'
        return None if value or self.empty else 'empty'


@dataclass(frozen=True)
class Table(Spec):
    """A mapping from free keys (strings) to values of ``of`` (may be empty: ``{}``)."""

    of: Spec = field(default_factory=Text)

    def expected(self) -> str:
        return f'a mapping of names to ({self.of.describe()})'

    def problem(self, value: Any) -> str | None:
        if not isinstance(value, Mapping):
            return 'not a mapping'
        return None if all(isinstance(k, str) for k in value) else 'a key is not a string'


@dataclass(frozen=True)
class Fields(Spec):
    """A mapping with exactly these keys, each required but those in ``optional``;
    ``extra``: other keys are allowed (and not checked)."""

    fields: Mapping[str, Spec] = field(default_factory=dict)
    extra: bool = False
    optional: tuple[str, ...] = ()

    def expected(self) -> str:
        return 'a mapping of the keys ' + ', '.join(self.fields)

    def problem(self, value: Any) -> str | None:
        return None if isinstance(value, Mapping) else 'not a mapping'


@dataclass(frozen=True)
class Either(Spec):
    """The first of ``choices`` whose own level fits (a list of options or ``{skip: why}``)."""

    choices: tuple[Spec, ...] = ()

    def expected(self) -> str:
        return ' or '.join(c.describe() for c in self.choices)

    def problem(self, value: Any) -> str | None:
        return None if self.choice(value) else 'none of these'

    def choice(self, value: Any) -> Spec | None:
        return next((c for c in self.choices if c.problem(value) is None), None)


def check(where: str, value: Any, spec: Spec, key: str = '',
          error: type[ValueError] = RecordError) -> None:
    """Raise ``error`` naming ``where``, the dotted ``key`` and what is expected, at the first
    part of ``value`` that does not fit ``spec``."""
    if value is None and spec.nullable:
        return
    problem = 'null' if value is None else spec.problem(value)
    if problem is not None:
        raise error(f'{where}: {key or "the record"}: expected {spec.describe()}, '
                    f'got {value!r} ({problem})')
    prefix = f'{key}.' if key else ''
    if isinstance(spec, Either):
        check(where, value, spec.choice(value), key, error)
    elif isinstance(spec, Items):
        for i, item in enumerate(value):
            check(where, item, spec.of, f'{key}[{i}]', error)
    elif isinstance(spec, Table):
        for name, item in value.items():
            check(where, item, spec.of, f'{prefix}{name}', error)
    elif isinstance(spec, Fields):
        for name, inner in spec.fields.items():
            if name not in value and name in spec.optional:
                continue
            if name not in value:
                raise error(f'{where}: missing key {prefix}{name} (expected '
                            f'{inner.describe()}; {key or "a record"} needs: '
                            f'{", ".join(spec.fields)}; see docs/maintaining.md)')
            check(where, value[name], inner, f'{prefix}{name}', error)
        unknown = sorted(set(value) - set(spec.fields))
        if unknown and not spec.extra:
            raise error(f'{where}: unknown key(s) {", ".join(prefix + k for k in unknown)} '
                        f'(known: {", ".join(spec.fields)}; a misspelt key would be ignored)')


def keys(spec: Spec, key: str = '') -> list[str]:
    """Every dotted key a :class:`Fields` schema requires (``recognise.tools``...)."""
    if not isinstance(spec, Fields):
        return []
    prefix = f'{key}.' if key else ''
    return [k for name, inner in spec.fields.items()
            for k in (prefix + name, *keys(inner, prefix + name))]
