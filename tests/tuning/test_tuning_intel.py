"""Intel MPI's I_MPI_ADJUST conditions, written as an environment file, and what a real run
shows of them (tests/data/tuning/intel-mpi/: OSU 7.3 on pip's Intel MPI 2021.18.1 here, first
line the command; bcast.env is the file this writer made for that run)."""

from __future__ import annotations

import pytest
from testdata import DATA, real_output

from omb_suite.mpi.evidence import FORCED_NOT_PROVEN
from omb_suite.tuning import files as tuning_files
from omb_suite.tuning import intel as ti
from omb_suite.tuning.rules import Rule, Step, TuningError, TuningProofError

RUNS = DATA / 'tuning' / 'intel-mpi'
VERSION = '2021.18.1'
BCAST = Rule('bcast', 2, 1, (Step(0, 'binomial'), Step(2048, 'ring'), Step(32768, 'default')),
             65536)
VALUE = '1:0-2047@2-2;3:2048-32767@2-2;0:32768-65536@2-2'


def test_conditions_per_step_with_the_tables_preset_ids():
    text = tuning_files.write('intel-mpi', VERSION, [BCAST]).text
    assert text == (RUNS / 'bcast.env').read_text()
    assert ti.environment(text) == {'I_MPI_ADJUST_BCAST': VALUE}


def test_rules_of_one_collective_join_in_one_variable_by_process_count():
    four = Rule('bcast', 4, 1, (Step(0, 'knomial'),), 1024)
    allreduce = Rule('allreduce', 2, 1, (Step(0, 'rabenseifner'),), 4096)
    assert ti.environment(ti.write([four, allreduce, BCAST], VERSION)) == {
        'I_MPI_ADJUST_ALLREDUCE': '2:0-4096@2-2',
        'I_MPI_ADJUST_BCAST': f'{VALUE};8:0-1024@4-4'}


@pytest.mark.parametrize('rules, why', [
    ([Rule('bcast', 2, 1, (Step(0, 'chain'),), 64)], "no bcast algorithm 'chain'"),
    ([BCAST, Rule('bcast', 2, 2, BCAST.steps, 65536)], 'two rules'),
])
def test_bad_rules_are_refused(rules, why):
    with pytest.raises(TuningError, match=why):
        ti.write(rules, VERSION)


def test_the_read_back_is_forced_not_proven():
    proof, = ti.proofs(BCAST, VERSION)
    assert proof.env == {'I_MPI_ADJUST_BCAST': VALUE, 'I_MPI_DEBUG': '6'}
    assert proof.expect(real_output(RUNS / 'bcast_tuned.out')) == (
        f'{FORCED_NOT_PROVEN}:I_MPI_ADJUST_BCAST={VALUE}')


@pytest.mark.parametrize('name', ['bcast_default', 'bcast_forced_1', 'bcast_forced_3'])
def test_a_run_without_the_files_value_fails_the_proof(name):
    proof, = ti.proofs(BCAST, VERSION)
    with pytest.raises(TuningProofError, match='did not report'):
        proof.expect(real_output(RUNS / f'{name}.out'))


def test_a_value_intel_mpi_cannot_parse_fails_the_proof():
    with pytest.raises(TuningProofError, match='do not parse'):
        ti.expect_read_back(real_output(RUNS / 'bcast_malformed.out'), 'I_MPI_ADJUST_BCAST',
                            '1:0-2047@2-2;3:zz-32767@2-2;0:32768-65536@2-2')


def test_a_load_that_cannot_be_proven_never_slower_is_not_written_with_the_reason(tmp_path):
    """Bad input: Intel MPI's variables replace its own choice at every size (measured), so
    omb-review tune writes no file unless --allow-unproven, and says why."""
    import json

    from omb_review.tuning import tune, tune_output

    assert 'cannot be proven never slower' in tuning_files.unsafe('intel-mpi', VERSION, [BCAST])
    assert tuning_files.unsafe('openmpi', '4.1.4', [Rule('bcast', 2, 1, (Step(0, 'chain'),),
                                                          64)]) is None
    study = tune.Study('spack-pip-impi', 'intel-mpi', VERSION, 'core', rules=[BCAST])
    said = tune_output._write(tmp_path, study, ['table'])
    record = json.loads((tmp_path / 'spack-pip-impi' / 'recommendation.json').read_text())
    assert record['file'] is None and 'not written: I_MPI_ADJUST_<COLL>' in said
    assert '--allow-unproven' in record['why_no_file']
    assert not list((tmp_path / 'spack-pip-impi').glob('*.env'))
    tune_output._write(tmp_path / 'anyway', study, ['table'], allow_unproven=True)
    assert list((tmp_path / 'anyway' / 'spack-pip-impi').glob('*.env'))
