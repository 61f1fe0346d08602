"""MPICH's collective selection file: what the writer puts in it, checked by walking the tree
the way MPICH's csel.c does, and the canary proof on real runs.

tests/data/tuning/mpich/ holds real outputs (first line: the command) of OSU 7.3 on Debian's
MPICH 4.0.2 and pip's MPICH 5.0.2 on this machine, loading files this writer made (their
sha256 in each run's loaded.sha256: tune.json the file, canary.json the proof's canary, ch4.json
the ch4 companion, loaded by every run of bcast and allreduce but canary_no_ch4).
"""

from __future__ import annotations

import json
from hashlib import sha256
from typing import Any

import pytest
from testdata import DATA, real_output

from omb_suite.mpi import algorithms
from omb_suite.tuning import files as tuning_files
from omb_suite.tuning import mpich as tm
from omb_suite.tuning.rules import ProofRun, Rule, Step, TuningError, TuningProofError

RUNS = DATA / 'tuning' / 'mpich'
BCAST = Rule('bcast', 2, 1, (Step(0, 'binomial'), Step(2048, 'scatter_ring_allgather')), 65536)
ALLGATHER = Rule('allgather', 4, 1, (Step(0, 'recursive_doubling'), Step(1024, 'ring')), 16384)
ALLREDUCE = Rule('allreduce', 2, 1, (Step(0, 'recursive_doubling'), Step(8192, 'default')),
                 65536)
ALLTOALL = Rule('alltoall', 4, 1, (Step(0, 'brucks'), Step(512, 'pairwise')), 16384)
#: the runs of tests/data/tuning/mpich/<version>-<collective>-<ranks>/ and their rule
RULES = {'bcast-2': BCAST, 'allgather-4': ALLGATHER, 'allreduce-2': ALLREDUCE,
         'alltoall-4': ALLTOALL}
RUN_DIRS = [f'{version}-{name}' for version in ('4.0.2', '5.0.2') for name in RULES]


def run(name: str) -> str:
    return real_output(RUNS / name)


def canary_of(rule: Rule, version: str) -> ProofRun:
    """The canary launch (the last: MPICH 4.0's proofs start with the read proof)."""
    return tm.proofs(rule, version)[-1]


def loaded_as(text: str, proof: ProofRun) -> str:
    """A recorded canary run as the check would have loaded it: the recorder named the canary
    file ``canary.json``, the check names it ``proof.file_name`` (MPICH 5 names it in its
    summary, and the proof holds it to that name)."""
    return text.replace('canary.json', proof.file_name)


def select(node: dict[str, Any], ranks: int, size: int, collective: str) -> str:
    """The algorithm MPICH's tree picks for MPI_COMM_WORLD of ``ranks`` ranks on one node, an
    OSU message of ``size`` bytes (csel.c: first key that holds, in file order)."""
    facts = {'comm_hierarchy=parent': True, 'comm_hierarchy=any': True,
             'is_sendbuf_inplace=no': True, 'is_sendbuf_inplace=yes': False,
             'is_commutative=yes': True, 'is_op_built_in=yes': True,
             'comm_size=pow2': ranks & (ranks - 1) == 0, 'comm_type=intra': True,
             'comm_size=node_comm_size': True}
    total = size * ranks
    count = size // 4 if collective == 'allreduce' else size
    pof2 = 1 << (ranks.bit_length() - 1)
    for key, child in node.items():
        if key.startswith(('algorithm=', 'composition=')):
            return key
        name, _, value = key.partition('<=') if '<=' in key else key.partition('<')
        if key in facts:
            holds = facts[key]
        elif key.endswith('=any'):
            holds = True
        elif key == 'count<pow2':
            holds = count < pof2
        elif key == f'collective={collective}':
            holds = True
        elif key.startswith(('collective=', 'comm_type=', 'is_')):
            holds = False
        else:
            measured = {'comm_size': ranks, 'avg_msg_size': size, 'total_msg_size': total,
                        'count': count}[name]
            holds = measured <= int(value) if '<=' in key else measured < int(value)
        if holds:
            return select(child, ranks, size, collective)
    raise AssertionError(f'no key of {list(node)} holds')


def tree(text: str) -> dict[str, Any]:
    return json.loads(text)


def library(version: str, level: str = 'tree') -> dict[str, Any]:
    return tm._default_tree(version, level)


# ---------------------------------------------------------------- the file


@pytest.mark.parametrize('version', ['4.0.2', '5.0.2'])
@pytest.mark.parametrize('rule', [BCAST, ALLGATHER, ALLREDUCE], ids=lambda r: r.collective)
def test_the_file_selects_the_rules_steps_and_the_library_elsewhere(version, rule):
    written = tree(tm.write([rule], version))
    default = library(version)
    for ranks in (2, 3, 4, 8):
        for size in [0] + [1 << i for i in range(21)]:
            got = select(written, ranks, size, rule.collective)
            wanted = rule.algorithm_at(size) if ranks == rule.ranks else 'default'
            if wanted == 'default':
                assert got == select(default, ranks, size, rule.collective), (ranks, size)
            else:
                assert got == tm.container(rule.collective, wanted, version), (ranks, size)


def test_collectives_without_rules_keep_the_library_tree():
    written = tree(tm.write([BCAST, ALLGATHER], '5.0.2'))
    default = library('5.0.2')
    assert set(written) == set(default)
    for key in set(default) - {'collective=bcast', 'collective=allgather'}:
        assert written[key] == default[key]
    assert written['collective=bcast']['comm_type=inter'] == \
        default['collective=bcast']['comm_type=inter']


def test_allgather_compares_total_bytes_osu_size_times_ranks():
    branch = tree(tm.write([ALLGATHER], '4.0.2'))['collective=allgather']['comm_type=intra']
    assert list(branch['comm_size<=4']) == [
        'total_msg_size<=4092', 'total_msg_size<=65536', 'total_msg_size=any']


def test_less_than_keys_pruning_decided_become_less_or_equal_below_a_message_size():
    """MPICH prunes 'comm_size<8' as '< 8' but searches it as '<= 8' (csel.c): copied below a
    message-size key, a key pruning decided becomes 'comm_size<=7'; beside the rules the
    library's branch stays as it was, pruned and searched alike."""
    text = tm.write([ALLREDUCE], '4.0.2')
    branch = tree(text)['collective=allreduce']['comm_type=intra']['comm_size<=2']
    assert 'comm_size<8' not in json.dumps(branch)
    for version in ('4.0.2', '5.0.2'):
        written = tree(tm.write([BCAST], version))['collective=bcast']['comm_type=intra']
        assert written['comm_size=any'] == library(version)['collective=bcast']['comm_type=intra']


def test_a_less_than_key_the_library_searched_stays_as_it_is():
    """alltoall's 'comm_size<8' sits below 'is_sendbuf_inplace=no', a key of the call, so MPICH
    5.0.2 searches it as '<= 8': its own choice at 8 ranks is scattered. Rewritten as '<=7'
    (what this writer did) 8 ranks took brucks, measured 1.4-2.8x slower at 16-256 B."""
    below = tree(tm.write([ALLTOALL], '5.0.2'))['collective=alltoall']['comm_type=intra']
    copied = below['comm_size<=4']['avg_msg_size=any']['is_sendbuf_inplace=no']
    assert 'comm_size<8' in copied and 'comm_size<=7' not in copied
    assert below['comm_size=any'] == library('5.0.2')['collective=alltoall']['comm_type=intra']


def test_two_rules_of_one_collective_chain_by_communicator_size():
    four = Rule('bcast', 4, 1, (Step(0, 'scatter_recursive_doubling_allgather'),), 1024)
    written = tree(tm.write([four, BCAST], '5.0.2'))
    assert list(written['collective=bcast']['comm_type=intra']) == [
        'comm_size<=1', 'comm_size<=2', 'comm_size<=3', 'comm_size<=4', 'comm_size=any']
    assert select(written, 4, 512, 'bcast').endswith('scatter_recursive_doubling_allgather')
    assert select(written, 2, 4096, 'bcast').endswith('scatter_ring_allgather')


def test_nb_and_intra_algorithm_names():
    assert tm.container('bcast', 'nb', '4.0.2') == 'algorithm=MPIR_Bcast_allcomm_nb'
    assert tm.container('alltoall', 'brucks', '5.0.2') == 'algorithm=MPIR_Alltoall_intra_brucks'


@pytest.mark.parametrize('rules, why', [
    ([Rule('bcast', 2, 1, (Step(0, 'chain'),), 64)], "no bcast algorithm 'chain'"),
    ([Rule('bcast', 2, 1, (Step(0, 'tree'),), 64)], 'takes parameters'),
    ([Rule('gather', 2, 1, (Step(0, 'binomial'),), 64)], 'not gather'),
    ([BCAST, Rule('bcast', 2, 2, BCAST.steps, 65536)], 'two rules'),
    ([Rule('bcast', 2, 1, (Step(8, 'binomial'),), 64)], 'ascend from 0'),
])
def test_bad_rules_are_refused_with_the_reason(rules, why):
    with pytest.raises(TuningError, match=why):
        tm.write(rules, '5.0.2')


def test_a_version_without_a_known_tree_is_refused():
    with pytest.raises(TuningError, match='no built-in selection tree'):
        tm.write([BCAST], '3.4.3')
    assert 'versions' in tuning_files.support('mpich', '3.4.3')


def test_record_loads_the_file_and_the_ch4_companion_not_device_collectives_none():
    written = tuning_files.write('mpich', '5.0.2', [BCAST, ALLGATHER])
    load = written.environment('/t/x.json')
    assert load == {'MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE': '/t/x.json',
                    tm.CH4_VARIABLE: '/t/mpich-5.0.2-ch4-selection.json'}
    assert written.companions == {'mpich-5.0.2-ch4-selection.json':
                                  tm.ch4_file([BCAST, ALLGATHER], '5.0.2')}


def test_collectives_ch4_leaves_to_mpir_need_no_companion():
    written = tuning_files.write('mpich', '4.0.2', [ALLGATHER, ALLTOALL])
    assert written.companions == {}
    assert list(written.env) == ['MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE']


@pytest.mark.parametrize('version', ['4.0.2', '5.0.2'])
@pytest.mark.parametrize('rule', [BCAST, ALLREDUCE, Rule('bcast', 4, 1, (
    Step(0, 'default'), Step(4096, 'binomial'), Step(16384, 'default')), 65536)],
    ids=['bcast', 'allreduce', 'bcast-default-steps'])
def test_the_companion_routes_only_non_default_steps_to_mpir(version, rule):
    written = tree(tm.ch4_file([rule], version))
    default = library(version, 'ch4_tree')
    route = f"composition={tm._config()['ch4_routes'][rule.collective]}"
    for ranks in (2, 3, 4, 8):
        for size in [0] + [1 << i for i in range(21)]:
            got = select(written, ranks, size, rule.collective)
            if ranks == rule.ranks and rule.algorithm_at(size) != 'default':
                assert got == route, (ranks, size)
            else:
                assert got == select(default, ranks, size, rule.collective), (ranks, size)
    assert {k: v for k, v in written.items() if k != f'collective={rule.collective}'} == \
        {k: v for k, v in default.items() if k != f'collective={rule.collective}'}


# ---------------------------------------------------------------- the proof on real runs


def test_canary_poisons_only_the_steps_first_size():
    proof = canary_of(BCAST, '4.0.2')
    canary = tree(proof.text)
    branch = canary['collective=bcast']['comm_type=intra']['comm_size<=2']
    assert branch.pop('avg_msg_size<=2048') == {'algorithm=MPIR_Barrier_intra_smp': {}}
    assert canary == tree(tm.write([BCAST], '4.0.2'))


def test_a_step_from_zero_is_poisoned_at_its_largest_power_of_two_only():
    """A canary over a whole step from 0 met MPICH's own MPI_Allreduce in 5.0.2's MPI_Init."""
    rule = Rule('alltoall', 4, 1, (Step(0, 'brucks'),), 6000)
    branch = tree(tm.proofs(rule, '5.0.2')[-1].text)['collective=alltoall']['comm_type=intra']
    assert list(branch['comm_size<=4']) == ['avg_msg_size<=4095', 'avg_msg_size<=4096',
                                            'avg_msg_size<=6000', 'avg_msg_size=any']
    assert branch['comm_size<=4']['avg_msg_size<=4096'] == {
        'algorithm=MPIR_Barrier_intra_smp': {}}
    assert branch['comm_size<=4']['avg_msg_size<=4095'] == \
        branch['comm_size<=4']['avg_msg_size<=6000'] == {'algorithm=MPIR_Alltoall_intra_brucks': {}}


@pytest.mark.parametrize('version', ['4.0.2', '5.0.2'])
def test_canary_stops_exactly_at_the_step_in_real_runs(version):
    proof = canary_of(BCAST, version)
    evidence = proof.expect(loaded_as(run(f'{version}-bcast-2/canary.out'), proof))
    assert evidence.startswith('mpich-file:bcast:stopped-at-2048')
    if version == '5.0.2':  # MPIR_CVAR_DEBUG_SUMMARY names the files MPICH 5 read
        assert evidence.endswith(f':read={proof.file_name}:ch4=ch4.json')


def test_the_canary_step_is_one_the_companion_sends_to_mpir():
    rule = Rule('bcast', 2, 1, (Step(0, 'binomial'), Step(1024, 'scatter_ring_allgather'),
                                Step(8192, 'default')), 65536)
    assert tm.proofs(rule, '5.0.2')[0].name == 'canary-bcast-2-at-1024'
    assert tm.proofs(ALLREDUCE, '5.0.2')[0].name == 'canary-allreduce-2-at-4096'
    alltoall = Rule('alltoall', 4, 1, (Step(0, 'brucks'), Step(512, 'default')), 4096)
    assert tm.proofs(alltoall, '5.0.2')[0].name == 'canary-alltoall-4-at-512'
    with pytest.raises(TuningError, match="every step is the library's default"):
        tm.proofs(Rule('bcast', 2, 1, (Step(0, 'default'),), 64), '5.0.2')


def test_the_proof_refuses_a_run_whose_ch4_level_used_its_own_tree():
    """5.0.2's allgather canary stops (allgather needs no companion) while MPID reports its
    built-in tree: had the companion been due, that is the missing file."""
    output = run('5.0.2-allgather-4/canary.out')
    assert 'MPID: MPIDI_coll_generic_json' in output
    with pytest.raises(TuningProofError, match='built-in tree'):
        tm.expect_canary(output, 'allgather', 1024, companion=True)


@pytest.mark.parametrize('run_dir, name', [
    ('4.0.2-bcast-2', 'canary_wrong_var'),  # the variable misspelt: the built-in tree runs
    ('4.0.2-bcast-2', 'canary_wrong_path'),  # 4.0.2 maps a file it could not open: a crash
    ('5.0.2-bcast-2', 'canary_wrong_var'),
    ('5.0.2-bcast-2', 'canary_wrong_path'),  # 5.0: 'Unable to open collective tuning file'
    ('5.0.2-bcast-2', 'canary_no_ch4'),  # without the companion ch4's POSIX level serves it
    ('5.0.2-allreduce-2', 'canary_no_ch4'),
    ('4.0.2-alltoall-4', 'canary_wrong_var'),
])
def test_canary_fails_where_the_file_was_not_applied(run_dir, name):
    version, collective = run_dir.split('-', 1)
    proof = canary_of(RULES[collective], version)
    with pytest.raises(TuningProofError, match='did not stop'):
        proof.expect(loaded_as(run(f'{run_dir}/{name}.out'), proof))


def test_canary_fails_where_the_boundary_is_elsewhere():
    with pytest.raises(TuningProofError, match='size rule differs'):
        tm.expect_canary(run('4.0.2-bcast-2/canary.out'), 'bcast', 4096)
    with pytest.raises(TuningProofError, match='size rule differs'):
        tm.expect_canary(run('4.0.2-bcast-2/canary.out'), 'bcast', 1024)


@pytest.mark.parametrize('run_dir', RUN_DIRS)
def test_the_runs_loaded_the_files_this_writer_writes(run_dir):
    version, name = run_dir.split('-', 1)
    rule = RULES[name]
    loaded = dict(reversed(line.split()) for line in
                  (RUNS / run_dir / 'loaded.sha256').read_text().splitlines())
    written = tuning_files.write('mpich', version, [rule])
    assert sha256(written.text.encode()).hexdigest() == loaded['tune.json']
    assert sha256(tm.proofs(rule, version)[-1].text.encode()).hexdigest() == loaded['canary.json']
    assert [sha256(t.encode()).hexdigest() for t in written.companions.values()] == \
        [loaded[n] for n in ('ch4.json',) if n in loaded]


@pytest.mark.parametrize('run_dir', RUN_DIRS)
def test_each_canary_stops_at_its_step_and_the_real_file_runs_through(run_dir):
    version, name = run_dir.split('-', 1)
    rule = RULES[name]
    proof = canary_of(rule, version)
    start = int(proof.name.rsplit('-', 1)[1])
    assert proof.expect(loaded_as(run(f'{run_dir}/canary.out'), proof)).startswith(
        f'mpich-file:{rule.collective}:stopped-at-{start}')
    tuned = run(f'{run_dir}/tuned.out')
    assert 'Assertion failed' not in tuned and tuned.rstrip().endswith('rc=0')
    assert str(rule.last_size) in tuned.split('# Size')[1].split()[-6:]


@pytest.mark.parametrize('version, source', [('4.0.2', 'v4.0.2'), ('5.0.2', 'v5.0.1')])
def test_every_algorithm_the_writer_names_is_one_mpich_parses(version, source):
    """An unknown name aborts MPI_Init (the *-unknown-algorithm.out runs), so each name the
    writer can produce must be one of csel_container.c's keys."""
    known = set((RUNS / f'containers-{source}.txt').read_text().split())
    for collective in ('bcast', 'allreduce', 'alltoall', 'allgather'):
        for name in algorithms.algorithms('mpich', version, collective)[1:]:
            try:
                key = tm.container(collective, name, version)
            except TuningError as err:
                assert 'takes parameters' in str(err)
                continue
            assert key in known, key


@pytest.mark.parametrize('version', ['4.0.2', '5.0.2'])
def test_a_name_mpich_does_not_know_fails_at_init_and_the_proof_says_so(version):
    with pytest.raises(TuningProofError, match='refused the file at MPI_Init: unrecognized key'):
        tm.expect_canary(run(f'{version}-unknown-algorithm.out'), 'bcast', 2048)


