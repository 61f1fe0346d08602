"""Every fenced command of the user pages (README.md, docs/*.md) names things that exist:
each suite command is checked against the real tool's ``--help`` (its options), the files
and check directories it names, the systems, modes, check classes and ``-S`` variables it
uses, the ``OMB_*``/``OSU_*`` variables it sets; commands of other tools are allowlisted
with the reason. Prose is checked too: every repository path and ``omb_suite``/``omb_review``
module it names in backticks exists. Cheap: each tool's ``--help`` runs once."""

from __future__ import annotations

import functools
import re
import shlex
import subprocess
import sys
from pathlib import Path

from testdata import REPO

BIN = Path(sys.executable).parent
#: Programs of other tools, and why a doc command of theirs is not run here.
OTHER_TOOLS = {
    'pip': "installs packages (the site's venv)", 'git': 'clones', 'cd': 'a shell builtin',
    'module': "the site's module system", 'spack': "Spack's own commands",
    'make': "OSU's build", './configure': "OSU's build", 'mpirun': 'an MPI launch',
    'srun': 'a Slurm step', 'sbatch': 'a Slurm job', 'bsub': 'an LSF job',
    'jsrun': 'an LSF launch', 'for': 'a shell loop', 'done': 'a shell loop',
    'python3': 'a venv or a script (checked when it is ours)', 'ls': 'a listing',
    'rfm49/bin/pip': 'a second venv', 'export': 'a variable (checked)',
    'cat': 'a file', 'source': 'a shell builtin', '.': 'a shell builtin', 'sudo': 'root',
    'apt-get': 'the system', 'curl': 'a download', 'tar': 'an archive', 'echo': 'output',
}
#: Commands that start another command (the check continues at the suite's tool).
LAUNCHERS = ('salloc', 'flux', 'timeout', 'nice', 'env')
PLACEHOLDER = re.compile(r'<[^>]*>|/path/|\.\.\.|^\$|^~|\bmy\w*\b')


def user_pages() -> list[Path]:
    return [REPO / 'README.md', *sorted((REPO / 'docs').glob('*.md'))]


def commands(text: str) -> list[str]:
    """The command lines of a page's ``bash``/``sh`` blocks (continuations joined)."""
    found = []
    for block in re.findall(r'^\s*```(?:bash|sh)\n(.*?)^\s*```', text, re.S | re.M):
        block = re.sub(r'\\\n\s*', ' ', block)
        found += [line.strip() for line in block.splitlines()
                  if line.strip() and not line.strip().startswith('#')]
    return found


@functools.cache
def help_options(*argv: str) -> frozenset[str]:
    out = subprocess.run([*argv, '--help'], capture_output=True, text=True, timeout=120,
                         cwd=REPO)
    assert out.returncode == 0, f'{" ".join(argv)} --help: {out.stderr[-500:]}'
    return frozenset(re.findall(r'(?<![\w-])(--?[A-Za-z][\w-]*)', out.stdout))


@functools.cache
def systems() -> frozenset[str]:
    names = set()
    for path in [*(REPO / 'reframe/config/systems').glob('*.py'), *(REPO / 'docs').rglob('*.py')]:
        names |= set(re.findall(r"^\s*'name': '([\w-]+)',\n\s*'descr'", path.read_text(), re.M))
    return frozenset(names)


@functools.cache
def modes() -> frozenset[str]:
    return frozenset(re.findall(r"'name': '(\w+)'", (REPO / 'reframe/config/modes.py').read_text()))


@functools.cache
def check_classes() -> frozenset[str]:
    return frozenset(c for path in (REPO / 'reframe/checks').rglob('*.py')
                     for c in re.findall(r'^class (\w+)\(', path.read_text(), re.M))


@functools.cache
def checks_variables() -> frozenset[str]:
    """The checks' variables and the ReFrame built-ins a page sets with ``-S``."""
    ours = {v for root in ('src/omb_suite/rfm', 'reframe/checks')
            for path in (REPO / root).rglob('*.py')
            for v in re.findall(r'^\s*(\w+) = variable\(', path.read_text(), re.M)}
    return frozenset(ours | {'require_reference', 'num_tasks', 'valid_systems'})


@functools.cache
def read_variables() -> frozenset[str]:
    """``OMB_*``/``OSU_*`` names the code, scripts and CI read."""
    names = set()
    roots = [REPO / r for r in ('src', 'scripts', 'reframe', 'benchmarks', 'tests', 'spack',
                                '.ci')]
    for path in [REPO / '.gitlab-ci.yml', *(p for r in roots for p in r.rglob('*'))]:
        if path.name in ('caller_env.py', Path(__file__).name):
            continue       # they read every name the docs give
        if path.is_file() and path.suffix in ('', '.py', '.sh', '.yaml', '.yml'):
            names |= set(re.findall(r'\b((?:OMB|OSU)_[A-Z0-9_]+)', path.read_text(
                errors='replace')))
    return frozenset(names)


def repo_path(token: str) -> Path | None:
    """A token as a path in this checkout (``<checkout>/...`` and ``/path/to/...suite/``
    prefixes dropped), or None when it names no repository path."""
    token = re.sub(r'^(<checkout>|/path/to/omb-regression-suite)/', '', token)
    if PLACEHOLDER.search(token) or '*' in token:
        return None
    if re.match(r'(src/omb_\w+|reframe|tests|scripts|benchmarks|docs|spack|\.ci)/', token):
        return REPO / token.rstrip('/')
    return None


def check_reframe(args: list[str]) -> list[str]:
    problems = []
    known = help_options(str(BIN / 'reframe'))
    for i, arg in enumerate(args):
        option = arg.split('=', 1)[0]
        if option.startswith('-') and not re.match(r'-\d', option):
            if option not in known and not re.fullmatch(r'-[a-zA-Z]{2,}', option):
                problems.append(f'reframe has no option {option}')
            value = args[i + 1] if i + 1 < len(args) else ''
            if option == '--system' and not PLACEHOLDER.search(value):
                if value.split(':')[0] not in systems():
                    problems.append(f'no system {value.split(":")[0]!r}')
            if option == '--mode' and value not in modes():
                problems.append(f'no mode {value!r}')
            if option == '-S' and value.split('=')[0] not in checks_variables():
                problems.append(f'no test variable {value.split("=")[0]!r}')
            if option == '-n' and re.match(r'[A-Z]', value):
                name = re.match(r'\w+', value)[0]
                if name not in check_classes():
                    problems.append(f'no check class {name!r}')
            if option in ('-C', '-c'):
                path = repo_path(value)
                if path is not None and not path.exists():
                    problems.append(f'no file {value}')
    return problems


def check_command(line: str, aliases: dict[str, str]) -> list[str]:
    for name, value in aliases.items():
        line = line.replace(f'${name}', value)
    try:
        tokens = shlex.split(line, comments=True)
    except ValueError as err:
        return [f'cannot be read by a shell: {err}']
    problems = []
    while tokens and re.match(r'\w+=', tokens[0]):       # VAR=value before a command
        name = tokens.pop(0).split('=')[0]
        if name.startswith(('OMB_', 'OSU_')) and name not in read_variables():
            problems.append(f'nothing reads {name}')
    if tokens and tokens[0] == 'export':
        names = [t.split('=')[0] for t in tokens[1:]]
        return [f'nothing reads {n}' for n in names
                if n.startswith(('OMB_', 'OSU_')) and n not in read_variables()]
    while tokens and tokens[0] in LAUNCHERS:              # salloc ... reframe ...
        rest = [i for i, t in enumerate(tokens) if Path(t).name == 'reframe']
        tokens = tokens[rest[0]:] if rest else []
    if not tokens:
        return problems
    program, args = tokens[0], tokens[1:]
    tool = Path(program).name
    if tool == 'reframe':
        return problems + check_reframe(args)
    if tool in ('omb-review', 'omb-setup', 'omb-procurement'):
        sub = [args[0]] if tool == 'omb-review' and args and not args[0].startswith('-') else []
        known = help_options(str(BIN / tool), *sub)
        return problems + [f'{tool} {" ".join(sub)} has no option {a.split("=")[0]}'
                           for a in args if a.startswith('--')
                           and a.split('=')[0] not in known]
    if program in ('bash', 'python', 'python3', '.venv/bin/python') and args:
        program, args = args[0], args[1:]
    path = repo_path(program)
    if path is not None:
        if not path.is_file():
            return [*problems, f'no file {program}']
        # a script that runs a command after `--` (tests/flux/instance -- reframe ...)
        cut = args.index('--') if '--' in args else len(args)
        text = path.read_text()
        problems += [f'{program} has no option {a}' for a in args[:cut]
                     if a.startswith('--') and a.split('=')[0] not in text]
        return problems + (check_command(shlex.join(args[cut + 1:]), {}) if args[cut:] else [])
    if program in OTHER_TOOLS or tool in OTHER_TOOLS or program.startswith('-'):
        return problems
    if re.match(r'\w+=', program):
        return problems
    return [*problems, f'{program}: neither a command of the suite nor an allowlisted tool '
                       '(tests/test_doc_commands.py OTHER_TOOLS)']


def test_every_fenced_command_names_what_exists():
    found = []
    for page in user_pages():
        aliases: dict[str, str] = {}
        for line in commands(page.read_text()):
            alias = re.fullmatch(r'(\w+)="([^"$]*)"', line)
            if alias:
                aliases[alias[1]] = alias[2]
                continue
            found += [f'{page.relative_to(REPO)}: {line[:90]}: {p}'
                      for p in check_command(line, aliases)]
    assert not found, '\n'.join(found)


def backticked(text: str) -> list[str]:
    return re.findall(r'`([^`\n]+)`', text)


def test_every_path_and_module_named_in_the_prose_exists():
    found = []
    for page in user_pages():
        for item in backticked(page.read_text()):
            token = item.split()[0] if item.split() else ''
            path = repo_path(re.sub(r'[:,;.)]+$', '', token))
            if path is not None and not path.exists():
                found.append(f'{page.relative_to(REPO)}: no file {token}')
            dotted = re.fullmatch(r'(omb_suite|omb_review)((?:\.\w+)+)', token)
            if dotted and not module_attribute(token):
                found.append(f'{page.relative_to(REPO)}: no module or name {token}')
    assert not found, '\n'.join(found)


def module_attribute(dotted: str) -> bool:
    """``omb_suite.a.b.Name``: the longest prefix that is a module file, and each remaining
    name defined in it."""
    parts = dotted.split('.')
    for cut in range(len(parts), 0, -1):
        base = REPO / 'src' / Path(*parts[:cut])
        source = base / '__init__.py' if base.is_dir() else base.with_suffix('.py')
        if source.is_file():
            rest = parts[cut:]
            text = source.read_text()
            return all(re.search(rf'^\s*(def|class) {n}\b|^\s*{n}\b.*=', text, re.M)
                       for n in rest[:1])
    return False


def test_every_documented_variable_is_read_somewhere():
    named = {v for page in user_pages()
             for v in re.findall(r'\b((?:OMB|OSU)_[A-Z0-9_]*[A-Z0-9])\b', page.read_text())}
    unread = sorted(named - read_variables())
    assert not unread, f'variables the docs name that nothing reads: {unread}'


def test_the_checks_find_what_does_not_exist():
    """Each kind of mistake a page could make is caught (synthetic commands, named so)."""
    wrong = check_command('reframe -C reframe/config/nope.py -c reframe/checks --sytem x '
                          '--system nosys --mode fast -S nonvar=1 -n OsuNope -r', {})
    assert sorted(wrong) == sorted([
        'reframe has no option --sytem', 'no file reframe/config/nope.py', "no system 'nosys'",
        "no mode 'fast'", "no test variable 'nonvar'", "no check class 'OsuNope'"])
    assert check_command('omb-review check perflogs --bogus', {}) == [
        'omb-review check has no option --bogus']
    assert check_command('OMB_NOTHING=1 bash scripts/quickstart.sh --nope', {}) == [
        'nothing reads OMB_NOTHING', 'scripts/quickstart.sh has no option --nope']
    assert 'neither a command of the suite' in check_command('frobnicate -x', {})[0]
    assert module_attribute('omb_suite.rfm.gpu.DeviceBuffers')
    assert not module_attribute('omb_suite.gpu.DeviceBuffers')


def test_a_site_configuration_with_a_mode_layers_the_modes():
    """A site's configuration does not define our modes: a how-to command that runs ``--mode``
    with ``-C site.py`` must layer ``-C reframe/config/modes.py`` too (as written it fails with
    ``invalid mode``)."""
    found = []
    for page in user_pages():
        for line in commands(page.read_text()):
            if re.search(r'\breframe\b', line) and '-C site.py' in line and '--mode' in line \
                    and 'modes.py' not in line:
                found.append(f'{page.relative_to(REPO)}: {line[:100]}')
    assert not found, '\n'.join(found)
