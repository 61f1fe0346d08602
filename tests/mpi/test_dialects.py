"""Launcher dialects as records (data/launchers/): every record complete and well-formed, its
placeholders filled from the job and the topology, what it cannot express skipped with the
reason, and every generated option list read against the grammar its launcher documents
(the sources are cited in each record)."""

from __future__ import annotations

import re

import pytest

from omb_suite.launch import placements
from omb_suite.machine.topology import Topology
from omb_suite.mpi import dialects, families
from omb_suite.mpi.dialects import DialectError, JobNumbers, Unexpressible

SUMMIT = Topology(nodes=16, sockets=2, cores_per_socket=21, gpus_per_node=6)
CRAY_EX = Topology(nodes=64, sockets=2, cores_per_socket=64)
CLOUD = Topology(nodes=128, sockets=1, cores_per_socket=4)
NAMES = [('placement', n) for n in placements.placement_names()] + [
    ('mapping', n) for n in placements.mapping_names()]


def where(kind: str, name: str) -> placements.Placing:
    return placements.placement(name) if kind == 'placement' else placements.mapping(name)


def numbers_for(kind: str, name: str, topo: Topology) -> list[JobNumbers]:
    """The jobs a placement makes (its pair), or a mapping at a few scales on ``topo``."""
    if kind == 'placement':
        p = placements.placement(name)
        return [JobNumbers.of(p.num_tasks, p.nodes, topo)]
    shapes = [placements.mapping(name).job_shape(ranks, topo) for ranks in (2, 4, 64, 1024)]
    return [JobNumbers.of(s.num_tasks, s.num_nodes, topo) for s in shapes
            if not isinstance(s, str)]


@pytest.mark.parametrize('dialect', dialects.names())
def test_every_record_says_options_or_why_not_for_every_placement_and_mapping(dialect):
    record = dialects.dialect(dialect)
    assert set(record.options) == {name for _, name in NAMES}, (
        f'data/launchers/{dialect}.yaml: give options or {{skip: reason}} for each')


def test_placeholders_are_filled_from_the_job_and_the_topology():
    fields = JobNumbers.of(8, 2, SUMMIT).fields()
    assert (fields['tasks'], fields['nodes'], fields['tasks_per_node']) == (8, 2, 4)
    assert fields['socket1_core'] == 21
    assert format(fields['socket_cycle'], ';') == '0;21;1;22'
    assert format(fields['core_list'], ':') == '0:1:2:3'
    assert dialects.fill(['-c', '{cores_per_socket}', 'list:{socket_cycle::}'],
                         JobNumbers.of(4, 1, SUMMIT)) == ['-c', '21', 'list:0:21:1:22']
    with pytest.raises(DialectError, match="need the job's numbers"):
        dialects.fill(['{tasks}'], None)


@pytest.mark.parametrize(('entry', 'message'), [
    ({'doc': 'x', 'options': {'core': ['-n', '{ranks}']}}, 'unknown placeholders'),
    ({'doc': 'x', 'options': {}, 'colour': 'red'}, "fields \\['colour'\\] unknown"),
    ({'doc': 'x', 'options': {'core': {'why': 'no'}}}, 'missing key options.core.skip'),
    ({'doc': 'x', 'options': {'core': {'skip': 'no', 'why': 'x'}}}, 'give a list of options or'),
    ({'doc': 'x', 'options': {'core': '-n 2'}}, r'options\.core: expected a list .* or a '
                                                 r'mapping of the keys skip'),
    ({'doc': '', 'options': {}}, 'doc: expected a non-empty string'),
    ({'doc': 'x', 'options': {}, 'launchers': {'srun': [4]}},
     r'launchers\.srun\[0\]: expected a non-empty string'),
    ({'doc': 'x', 'options': {}, 'command': ['a']}, 'it names none'),
])
def test_a_malformed_record_is_refused_saying_what_to_fix(entry, message):
    with pytest.raises(DialectError, match=message):
        dialects.read_record('mine', entry)


@pytest.mark.parametrize(('launcher', 'family', 'dialect'), [
    ('srun', 'openmpi', 'srun'), ('srunalloc', 'mpich', 'srun'), ('jsrun', 'spectrum-mpi', 'jsrun'),
    ('flux', 'openmpi', 'flux'), ('pals', 'cray-mpich', 'pals'), ('alps', 'cray-mpich', 'aprun'),
    ('mpirun', 'openmpi', 'ompi'), ('mpiexec', 'mpich', 'hydra'), ('mpirun', 'intel-mpi', 'impi'),
    ('mpiexec', 'cray-mpich', 'pals'),
])
def test_each_launcher_speaks_its_dialect(launcher, family, dialect):
    assert placements.launcher_dialect(launcher, family) == dialect


def test_two_records_claiming_one_launcher_are_refused_naming_both(monkeypatch):
    """Synthetic: a copy of the pals record that names ReFrame's ``pals`` launcher too."""
    found = dict(dialects.dialects())
    found['pjm'] = dialects.read_record('pjm', {'doc': 'PJM mpiexec', 'launchers': {'pals': []},
                                                'options': {}})
    monkeypatch.setattr(dialects, 'dialects', lambda: found)
    with pytest.raises(DialectError, match=r"'pals' is named in the launchers of "
                                           r"data/launchers/pals\.yaml and "
                                           r"data/launchers/pjm\.yaml"):
        dialects.of_launcher('pals')
    assert dialects.of_launcher('jsrun').name == 'jsrun'


def test_a_second_record_naming_a_launcher_is_left_out_and_the_first_keeps_working(
        tmp_path, monkeypatch):
    """Synthetic: a new record, pjm.yaml, names ReFrame's ``pals`` launcher, which pals.yaml
    names: caught when the records are read (a warning naming both files); pjm is left out,
    saying why when asked for, and pals, named after the launcher, keeps it."""
    folder = dialects._folder()
    for name in dialects.names():
        (tmp_path / f'{name}.yaml').write_text(folder.joinpath(f'{name}.yaml').read_text())
    (tmp_path / 'pjm.yaml').write_text("doc: PJM mpiexec\nlaunchers: {pals: []}\noptions: {}\n")
    monkeypatch.setattr(dialects, '_folder', lambda: tmp_path)
    for cached in (dialects.names, dialects._read, dialects.dialects):
        cached.cache_clear()
    try:
        with pytest.warns(UserWarning, match=r"'pals' is named in the launchers of "
                                             r"data/launchers/pals\.yaml and "
                                             r"data/launchers/pjm\.yaml.*dialect pjm is left out"):
            found = dialects.dialects()
        assert 'pjm' not in found and 'pals' in found
        assert dialects.of_launcher('pals').name == 'pals'
        with pytest.raises(DialectError, match=r"pjm\.yaml: launchers: \['pals'\] are named "
                                               r"by another record too"):
            dialects.dialect('pjm')
    finally:
        for cached in (dialects.names, dialects._read, dialects.dialects):
            cached.cache_clear()


@pytest.mark.parametrize('family', families.names())
def test_every_familys_mpirun_dialect_is_a_record(family):
    assert dialects.dialect(families.mpirun_dialect(family)).name  # or the record's error


def test_cray_mpich_under_reframes_mpiexec_is_pals_with_its_ranks_per_node():
    options = placements.launch_options(placements.mapping('core'), 'mpiexec', 'cray-mpich',
                                        JobNumbers.of(4, 1, CRAY_EX))
    assert options == ['--ppn', '4', '--cpu-bind', 'list:0:1:2:3']   # ReFrame emits -n 4


def test_what_a_dialect_cannot_express_says_why_and_one_rank_per_node_still_runs():
    node = placements.mapping('node')
    with pytest.raises(Unexpressible, match="PALS mpiexec cannot express mapping 'node': "
                                            "PALS mpiexec places --ppn consecutive ranks"):
        node.launcher_options('pals', numbers=JobNumbers.of(8, 2, CRAY_EX))
    # one rank per node (the start-up runs): there is no order to choose
    assert node.launcher_options('pals', numbers=JobNumbers.of(4, 4, CRAY_EX)) == [
        '--cpu-bind', 'list:0']
    with pytest.raises(Unexpressible, match='flux run cannot oversubscribe'):
        placements.oversubscribe_options(['-o', 'cpu-affinity=per-task'], 'flux')
    override = {'jsrun': {'socket': ['-n', '{nodes}']}}     # a partition knows better
    assert placements.mapping('socket').launcher_options(
        'jsrun', override, JobNumbers.of(4, 2, SUMMIT)) == ['-n', '2']


# ------------------------------------------------ generated lines against the documentation

NUMBER = r'[1-9]\d*'
CPUS = r'\d+(?:-\d+)?'
#: Each dialect's grammar, option by option, from the documentation its record cites.
GRAMMAR = {
    # jsrun(1) / OLCF quick start: -n sets, -a tasks, -c cores, -r sets per host, -b packed:N
    'jsrun': [rf'-n {NUMBER}', rf'-a {NUMBER}', rf'-c {NUMBER}', rf'-r {NUMBER}',
              rf'-b packed:{NUMBER}'],
    # flux-run(1), flux-shell-options(7): -N -n -x --taskmap=cyclic -o cpu-affinity=...
    'flux': [rf'-N {NUMBER}', rf'-n {NUMBER}', '-x', '--taskmap=cyclic',
             rf'-o cpu-affinity=(?:per-task|map:{CPUS}(?:;{CPUS})*)'],
    # PALS mpiexec (ALCF user guide): -n, --ppn, --cpu-bind list:a:b:...
    'pals': [rf'-n {NUMBER}', rf'--ppn {NUMBER}', rf'--cpu-bind list:{CPUS}(?::{CPUS})*'],
    # aprun(1): -cc cpu list
    'aprun': [rf'-cc {CPUS}(?:,{CPUS})*'],
    # Intel MPI Developer Reference: -ppn N, -genv I_MPI_PIN_PROCESSOR_LIST <proclist>
    'impi': [rf'-ppn {NUMBER}', rf'-genv I_MPI_PIN_PROCESSOR_LIST {CPUS}(?:,{CPUS})*'],
    # Open MPI 5 mpirun(1): --map-by <object>, --bind-to core
    'ompi5': ['--map-by (?:core|package|node)', '--bind-to core'],
}


#: Dialects read against something other than a grammar here, and what reads them.
READ_ELSEWHERE = {
    'ompi': 'tests/launch/test_launchers.py: the real Open MPI 4 mpirun',
    'hydra': 'tests/launch/test_launchers.py: the real MPICH mpiexec.hydra',
    'srun': 'tests/test_e2e_cluster.py: the real srun of the two-node Slurm cluster',
    'mv2': "variables, not options: MVAPICH2's own binding table, read by the check",
}


def matches_grammar(options: list[str], grammar: list[str]) -> bool:
    """The option list reads as options of ``grammar``; no options at all are grammatical."""
    line = ' '.join(options)
    return re.fullmatch(rf'(?:(?:{"|".join(grammar)})(?: |$))*', line + ' ' if line else '') \
        is not None


@pytest.mark.parametrize('dialect', dialects.names())
def test_every_dialect_is_read_against_its_grammar_or_says_what_reads_it(dialect):
    """A new dialect needs a GRAMMAR entry (or a line in READ_ELSEWHERE): the check is not
    opt-in."""
    assert (dialect in GRAMMAR) != (dialect in READ_ELSEWHERE), (
        f'data/launchers/{dialect}.yaml: give its documented grammar in GRAMMAR '
        f'(tests/mpi/test_dialects.py), or say in READ_ELSEWHERE what reads its options')


def test_an_empty_option_list_is_grammatical_and_a_stray_option_is_not():
    assert matches_grammar([], GRAMMAR['pals'])
    assert matches_grammar(['-n', '4', '--ppn', '2'], GRAMMAR['pals'])
    assert not matches_grammar(['-n', '4', '--bind-to', 'core'], GRAMMAR['pals'])


@pytest.mark.parametrize('dialect', sorted(GRAMMAR))
@pytest.mark.parametrize('topo', [SUMMIT, CRAY_EX, CLOUD], ids=['summit', 'cray-ex', 'cloud'])
def test_every_generated_option_list_follows_the_documented_grammar(dialect, topo):
    record, checked = dialects.dialect(dialect), 0
    launcher = next(iter(record.launchers), '')
    for kind, name in NAMES:
        for numbers in numbers_for(kind, name, topo):
            try:
                options = [*record.prefix(launcher, numbers),
                           *where(kind, name).launcher_options(dialect, numbers=numbers)]
            except Unexpressible:
                continue
            assert matches_grammar(options, GRAMMAR[dialect]), (kind, name, options)
            checked += 1
    assert checked >= 6, f'{dialect}: only {checked} option lists generated'


#: family: the MPI family of the job; ``None`` where the launcher alone decides the dialect
#: (a dialect a family's own mpirun/mpiexec speaks needs its family here).
@pytest.mark.parametrize(('launcher', 'family', 'kind', 'name', 'numbers', 'line'), [
    # the seeds' cloud team: `flux run -N2 -n2 -o cpu-affinity=per-task`
    ('flux', None, 'placement', 'inter_node', JobNumbers.of(2, 2, CLOUD),
     '-N 2 -n 2 -o cpu-affinity=per-task'),
    # OLCF: one resource set of a whole socket (21 cores on Summit) per socket
    ('jsrun', None, 'placement', 'inter_socket', JobNumbers.of(2, 1, SUMMIT),
     '-n 2 -a 1 -c 21 -r 2 -b packed:1'),
    # ALCF: `mpiexec -n 8 -ppn 8 --cpu-bind list:4:56:9:61...`, one CPU per local rank
    ('pals', None, 'mapping', 'socket', JobNumbers.of(4, 1, CRAY_EX),
     '-n 4 --ppn 4 --cpu-bind list:0:64:1:65'),
    ('alps', None, 'placement', 'inter_socket', JobNumbers.of(2, 1, CRAY_EX), '-cc 0,64'),
    # Cray MPICH's own mpiexec is PALS (its record); ReFrame's mpiexec emits -n itself
    ('mpiexec', 'cray-mpich', 'mapping', 'core', JobNumbers.of(4, 1, CRAY_EX),
     '--ppn 4 --cpu-bind list:0:1:2:3'),
])
def test_generated_lines_read_as_the_documented_examples(launcher, family, kind, name, numbers,
                                                          line):
    options = placements.launch_options(where(kind, name), launcher, family, numbers)
    assert ' '.join(options) == line
