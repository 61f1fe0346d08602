"""Environments from environment modules (``omb-setup --module``, ``--discover-modules``) with
a real Lmod (Debian's ``lmod``) over a site-like hierarchy of Debian's Open MPI and MPICH:
facts are read after ``module load``, wrong or unknown modules are refused with what to do,
and discovery pairs each OSU module with the MPI it sits under."""

from __future__ import annotations

import pytest
from lmod_tree import debian_version, write_tree
from modules_helpers import LMOD_HOME, needs_debian, needs_lmod, stand_in_osu

from omb_suite.setup import environs, module_discovery, module_envs

pytestmark = [needs_lmod, needs_debian('openmpi', 'mpich')]


@pytest.fixture(scope='module')
def site(tmp_path_factory):
    """The hierarchy: Open MPI with an OSU built on it; MPICH with an OSU module whose
    program was built with Open MPI (a site's mistake discovery must catch)."""
    root = tmp_path_factory.mktemp('site')
    osu = stand_in_osu(root / 'osu-openmpi', 'openmpi')
    loads = write_tree(root / 'modules', {'openmpi': osu, 'mpich': osu})
    return root / 'modules', loads


@pytest.fixture
def lmod(site, monkeypatch):
    """This process as a login shell with Lmod that searches the site's Core."""
    monkeypatch.setenv('MODULEPATH', str(site[0] / 'Core'))
    monkeypatch.setenv('MODULESHOME', str(LMOD_HOME))
    for var in ('LOADEDMODULES', '_LMFILES_', 'BASH_FUNC_module%%', 'LMOD_CMD', 'MODULES_CMD'):
        monkeypatch.delenv(var, raising=False)
    return site[1]


def test_entry_reads_family_version_and_osu_after_module_load(lmod, site):
    entry, = module_envs.module_entries([f'openmpi={",".join(lmod["openmpi"])}'])
    version = debian_version('openmpi')
    assert entry['name'] == f'mod-openmpi-{version.replace(".", "_")}'
    assert (entry['mpi_family'], entry['mpi_version']) == ('openmpi', version)
    assert entry['modules'] == [f'openmpi/{version}', 'osu-micro-benchmarks/7.3']
    assert entry['osu_version'] == '7.3'                       # from the program's banner
    assert entry['osu_root'].endswith('osu-openmpi')
    assert str(site[0] / 'sw' / f'openmpi-{version}' / 'bin') in entry['tool_path']
    assert entry['module_use'] == [str(site[0] / 'Core')]
    assert entry['module_init'] == f'{LMOD_HOME}/init/bash'     # module defined from it
    assert entry['path'] == [] and entry['source'] == 'module'


def test_mpi_module_alone_has_no_osu(lmod):
    entry, = module_envs.module_entries([f'mpich={lmod["mpich"][0]}'])
    assert entry['mpi_family'] == 'mpich' and entry['osu_root'] is None
    assert 'osu' not in environs.features(entry)


def test_family_the_modules_do_not_provide_is_refused(lmod):
    with pytest.raises(module_envs.ModuleError, match=r'the modules provide openmpi .*'
                       r'/bin\), not mpich: name the family they provide'):
        module_envs.module_entries([f'mpich={lmod["openmpi"][0]}'])


def test_unknown_module_is_refused_with_lmods_words(lmod):
    with pytest.raises(module_envs.ModuleError, match=r'(?s)`module load openmpi/0.0` failed:'
                       r'.*unknown.*module avail'):
        module_envs.module_entries(['openmpi=openmpi/0.0'])


def test_osu_linking_another_mpi_is_refused(lmod):
    with pytest.raises(module_envs.ModuleError, match=r'links .*libmpi\.so.*not a mpich '
                       r'library: the OSU module was built with another MPI'):
        module_envs.module_entries([f'mpich={",".join(lmod["mpich"])}'])


@pytest.mark.parametrize('item', ['openmpi', 'openmpi=', 'intelmpi=impi/2021'])
def test_malformed_item_says_the_form(item):
    with pytest.raises(module_envs.ModuleError, match='expected FAMILY=MODULE'):
        module_envs.parse_item(item)


def test_no_module_command_says_how_to_start_one(monkeypatch):
    monkeypatch.setenv('MODULESHOME', '/nonexistent')
    monkeypatch.setattr(module_envs, 'ENSURE_MODULE', module_envs.ENSURE_MODULE.replace(
        ' '.join(f'"{f}"' for f in module_envs.INIT_FILES), '"$MODULESHOME/init/bash"'))
    monkeypatch.delenv('BASH_FUNC_module%%', raising=False)
    with pytest.raises(module_envs.ModuleError, match='no `module` command: start Lmod'):
        module_envs.module_entries(['openmpi=openmpi/4.1.4'])


def test_discovery_pairs_osu_with_its_mpi_and_lists_what_it_skipped(lmod):
    found = module_discovery.discover()
    assert [e['modules'] for e in found.entries] == [lmod['openmpi']]
    (chain, why), = found.skipped
    assert chain == ' '.join(lmod['mpich'])
    assert 'not a mpich library' in why
    report = found.report()
    assert '1 MPI + OSU pair(s) found, 1 skipped' in report
    assert f'found    {" ".join(lmod["openmpi"])}: openmpi' in report


def test_two_osu_builds_on_one_mpi_get_names_of_their_own():
    entries = [{'modules': ['openmpi/4.1.4', 'osu-micro-benchmarks/7.3']},
               {'modules': ['openmpi/4.1.4', 'osu-micro-benchmarks/7.4']},
               {'modules': ['mpich/4.0.2']}]
    assert [e['name'] for e in module_envs.name_uniquely(entries)] == [
        'mod-openmpi-4_1_4-osu-micro-benchmarks-7_3',
        'mod-openmpi-4_1_4-osu-micro-benchmarks-7_4', 'mod-mpich-4_0_2']


def test_series_is_declared_per_family_or_for_all_module_environments():
    entries = [{'modules': ['openmpi/4.1.5'], 'mpi_family': 'openmpi'},
               {'modules': ['mpich/4.0.2'], 'mpi_family': 'mpich'},
               {'modules': [], 'mpi_family': 'openmpi'}]            # from PATH: no series
    assert [e.get('series') for e in module_envs.with_series(entries, ['openmpi=ompi'])] == [
        'ompi', None, None]
    assert [e.get('series') for e in module_envs.with_series(entries, ['site-mpi'])] == [
        'site-mpi', 'site-mpi', None]
    assert [e.get('series') for e in module_envs.with_series(entries, [])] == [None] * 3


@pytest.mark.parametrize(('item', 'words'), [
    ('openmpi=open mpi', 'letters, digits'), ('nompi=x', 'no MPI family'),
    ('intel-mpi=impi', 'no environment from modules'), ('openmpi=', 'letters, digits')])
def test_malformed_series_says_what_is_wrong(item, words):
    entries = [{'modules': ['openmpi/4.1.5'], 'mpi_family': 'openmpi'}]
    with pytest.raises(module_envs.ModuleError, match=words):
        module_envs.with_series(entries, [item])


@pytest.mark.parametrize(('library', 'family'), [
    ('/usr/lib/x86_64-linux-gnu/libmpi.so.40', 'openmpi'),
    ('/usr/lib/x86_64-linux-gnu/libmpich.so.12', 'mpich'), (None, None)])
def test_family_of_a_system_mpi_module_comes_from_the_library_osu_links(library, family):
    """A module of a system MPI (Spack's for a /usr external) adds nothing to PATH."""
    from omb_suite.setup.module_facts import linked_family
    assert linked_family(library) == family


def test_omb_setup_registers_loaded_and_named_modules_instead_of_path(lmod, site, tmp_path,
                                                                      monkeypatch, capsys):
    """The Debian MPIs on PATH are the modules' own: registered once, through the modules;
    `--loaded-modules` and discovery finding the same modules give one environment."""
    from setup_helpers import copy_checkout

    from omb_suite.setup import cli
    monkeypatch.setenv('LOADEDMODULES', ':'.join(lmod['openmpi']))
    registry = tmp_path / 'environments.json'
    assert cli.main(['--repo', str(copy_checkout(tmp_path / 'repo')), '--no-spack',
                     '--registry', str(registry), '--loaded-modules', '--discover-modules',
                     '--module', f'mpich={lmod["mpich"][0]}', '--series', 'openmpi=ompi']) == 0
    out = capsys.readouterr().out
    assert 'the openmpi on PATH is the one of environment mod-openmpi-' in out
    assert "ReFrame's `local` would have no modules system" in out     # no LMOD_CMD here
    entries = environs.load_registry(registry)
    assert sorted(e['modules'] for e in entries) == sorted([lmod['openmpi'], lmod['mpich'][:1]])
    assert {e['source'] for e in entries} == {'module'}
    # the declared series reaches the ReFrame environment's extras (the perflog's `series`)
    assert {e['mpi_family']: environs.to_reframe(e)['extras']['series'] for e in entries} == {
        'openmpi': 'ompi', 'mpich': None}


def test_loaded_modules_that_are_no_mpi_leave_path_to_decide(lmod, tmp_path, monkeypatch,
                                                              capsys):
    from setup_helpers import copy_checkout

    from omb_suite.setup import cli
    monkeypatch.setenv('LOADEDMODULES', 'lmod')          # Lmod's own module: no MPI
    registry = tmp_path / 'environments.json'
    assert cli.main(['--repo', str(copy_checkout(tmp_path / 'repo')), '--no-spack',
                     '--registry', str(registry), '--loaded-modules']) == 0
    assert 'the modules loaded here are no MPI environment' in capsys.readouterr().out
    assert {e['source'] for e in environs.load_registry(registry)} == {'system'}


def test_discovery_loads_a_flat_osu_module_that_loads_its_mpi_itself(site, tmp_path,
                                                                      monkeypatch):
    """EasyBuild style: no hierarchy, the OSU module loads its MPI (depends_on)."""
    tree, loads = site
    flat = tmp_path / 'flat' / 'osu-micro-benchmarks'
    flat.mkdir(parents=True)
    osu_lua = next((tree / 'MPI' / 'openmpi').rglob('*.lua')).read_text()
    (flat / '7.3-gompi.lua').write_text(f'depends_on("{loads["openmpi"][0]}")\n{osu_lua}')
    monkeypatch.setenv('MODULEPATH', f'{tmp_path / "flat"}:{tree / "Core"}')
    monkeypatch.setenv('MODULESHOME', str(LMOD_HOME))
    found = module_discovery.discover()
    flat_entry, = [e for e in found.entries if e['modules'] == ['osu-micro-benchmarks/7.3-gompi']]
    assert (flat_entry['mpi_family'], flat_entry['osu_version']) == ('openmpi', '7.3')
    assert flat_entry['name'] == 'mod-osu-micro-benchmarks-7_3-gompi'
