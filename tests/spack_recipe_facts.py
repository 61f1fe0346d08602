"""Facts about our osu-micro-benchmarks recipe and builtin's, read through Spack's own API.

Not a test module: the tests run it as ``spack -C SCOPE python tests/spack_recipe_facts.py
[SPEC ...]`` (SCOPE registers our repository) and read the one JSON object it prints:

* ``recipes``: per namespace (``omb`` = ours, ``builtin``) the versions with their sha256,
  the variants and the maintainers;
* ``resolves_to``: the namespace a plain ``osu-micro-benchmarks`` resolves to;
* ``required``: every package and variant our requirements name (``+cuda`` needs e.g.
  ``mvapich2+cuda``), and whether the builtin packages Spack uses have it;
* ``configure``: per SPEC, concretized, the configure arguments of our recipe and of
  builtin's recipe for that same concrete spec.
"""

from __future__ import annotations

import json
import sys

import spack.build_environment
import spack.concretize
import spack.repo

NAME = 'osu-micro-benchmarks'


def recipe_class(namespace: str):
    return spack.repo.PATH.get_repo(namespace).get_pkg_class(NAME)


def recipe(namespace: str) -> dict:
    cls = recipe_class(namespace)
    return {'versions': {str(v): args.get('sha256') for v, args in cls.versions.items()},
            'variants': sorted(cls.variant_names()),
            'maintainers': sorted(getattr(cls, 'maintainers', []))}


def required() -> list[dict]:
    """Package and variant of each spec in our requirements, and whether Spack knows it."""
    out = []
    for when, groups in recipe_class('omb').requirements.items():
        for specs, _policy, _message in groups:
            for spec in specs:
                for dep in spec.traverse(root=False):
                    known = spack.repo.PATH.exists(dep.name)
                    for variant in dep.variants:
                        out.append({'when': str(when), 'package': dep.name, 'variant': variant,
                                    'exists': known and spack.repo.PATH.get_pkg_class(
                                        dep.name).has_variant(variant)})
    return out


def configure(text: str) -> dict:
    """Both recipes' configure arguments for one concrete spec (what `spack install` runs)."""
    spec = spack.concretize.concretize_one(text)
    context = spack.build_environment.Context.BUILD
    # What a build does first: dependencies set e.g. spec['mpi'].mpicc.
    spack.build_environment.SetupContext(spec, context=context).set_all_package_py_globals()
    return {'spec': str(spec), 'namespace': spec.namespace,
            'ours': spec.package.configure_args(),
            'builtin': recipe_class('builtin')(spec).configure_args()}


def main(specs: list[str]) -> None:
    print(json.dumps({
        'recipes': {ns: recipe(ns) for ns in ('omb', 'builtin')},
        'resolves_to': spack.repo.PATH.get_pkg_class(NAME).namespace,
        'required': required(),
        'configure': {text: configure(text) for text in specs},
    }))


if __name__ == '__main__':
    main(sys.argv[1:])
