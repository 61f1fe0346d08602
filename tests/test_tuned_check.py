"""OsuTunedCollective (reframe/checks/explore/osu_tuned.py) in dry runs: what it skips and why,
and the job it writes: default and tuned runs alternating, the file loaded only in the tuned
ones, the family's proof launches."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from rfm_helpers import job_scripts, run_reframe, two_family_registry

from omb_suite.tuning import files as tuning_files
from omb_suite.tuning import rules as tuning
from omb_suite.tuning.rules import Rule, Step

RULE = Rule('bcast', 2, 1, (Step(0, 'default'), Step(1024, 'binomial')), 65536)


def recommendation(tmp: Path, environ: str = 'test-openmpi', family: str = 'openmpi',
                   version: str = '4.1.4', rules: tuple[Rule, ...] = (RULE,),
                   written: bool = True, told: bool = True) -> Path:
    """What ``omb-review tune -o tmp/tuning`` writes for one environment."""
    where = tmp / 'tuning' / environ
    where.mkdir(parents=True)
    record = {'environ': environ, 'mpi_family': family, 'mpi_version': version,
              'mapping': 'core', 'rules': [
                  {'collective': r.collective, 'ranks': r.ranks, 'nodes': r.nodes,
                   'steps': [{'start': s.start, 'algorithm': s.algorithm} for s in r.steps],
                   'last_size': r.last_size} for r in rules]}
    if written:
        f = tuning_files.write(family, version, list(rules))
        (where / f.name).write_text(f.text)
        for name, text in f.companions.items():
            (where / name).write_text(text)
        record.update(file=f.name, companions=sorted(f.companions),
                      load=f.environment(str((where / f.name).resolve())))
        if told:  # what the load changes (an older omb-review tune did not say)
            record.update(touches=list(f.touches), changes=f.changes)
    else:
        record.update(file=None, why_no_file='no writer')
    (where / 'recommendation.json').write_text(json.dumps(record))
    return tmp / 'tuning'


def dry(tmp: Path, *args: str) -> str:
    out = run_reframe(tmp, '--dry-run', '-p', '^test-openmpi$', '-n',
                      'OsuTunedCollective%case=osu_(bcast|allgather|gatherv)/default', '-E',
                      'scale == 2', *args, registry=two_family_registry(tmp),
                      checks=('explore/osu_tuned.py',))
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    return out.stdout


def test_without_a_tuning_directory_it_says_how_to_get_one(tmp_path):
    assert "give -S tuning_dir=DIR: the directory that 'omb-review tune" in dry(tmp_path)


def test_an_environment_without_a_recommendation_is_skipped_naming_the_file(tmp_path):
    tuning_dir = recommendation(tmp_path, environ='other-env')
    out = dry(tmp_path, '-S', f'tuning_dir={tuning_dir}')
    assert 'test-openmpi/recommendation.json: no recommendation for environment' in out


@pytest.mark.skipif(not tuning_files.WRITERS, reason='no tuning file writer yet')
def test_a_recommendation_for_another_version_is_not_loaded(tmp_path):
    out = dry(tmp_path, '-S', f'tuning_dir={recommendation(tmp_path, version="5.0.11")}')
    assert ('stale: openmpi-5.0.11-coll-rules.conf is valid for openmpi 5.0.11 only, this '
            'environment runs openmpi 4.1.4: not loaded' in out)


def test_a_recommendation_that_does_not_say_what_the_load_changes_is_not_loaded(tmp_path):
    out = dry(tmp_path, '-S', f'tuning_dir={recommendation(tmp_path, told=False)}')
    assert 'does not say what the load changes' in out and 'run omb-review tune again' in out


def test_a_recommendation_without_a_file_says_why(tmp_path):
    out = dry(tmp_path, '-S', f'tuning_dir={recommendation(tmp_path, written=False)}')
    assert 'test-openmpi: no tuning file (no writer)' in out


@pytest.mark.skipif('ompi_rules' not in tuning_files.WRITERS, reason='no Open MPI writer yet')
@pytest.mark.parametrize('relative', [False, True], ids=['absolute', 'relative'])
def test_the_job_alternates_default_and_tuned_runs_and_adds_the_proof(tmp_path, relative):
    tuning_dir = recommendation(tmp_path)
    # relative to where reframe starts (run_reframe: tmp_path), as CI's scripts give it
    given = tuning_dir.relative_to(tmp_path) if relative else tuning_dir
    out = dry(tmp_path, '-S', f'tuning_dir={given}', '-S', 'repeats=3')
    # gatherv is served by another component than coll/tuned, and not in the verdict set
    assert 'the load does not change gatherv: coll/tuned follows the rules file' in out
    scripts = job_scripts(tmp_path).values()
    # allgather: no rule at 2 ranks, but the load touches it: measured, nothing to prove
    (other,) = [s for s in scripts if 'osu_allgather' in s]
    assert len(re.findall(r'> tuned\.\d\.out', other)) == 2 and 'proof-' not in other
    (script,) = [s for s in scripts if 'osu_bcast' in s]
    runs = re.findall(r'^(env -u \S+.*?|mpirun.*?)(?: > | 2>| \|\|)', script, re.M)
    assert len(re.findall(r'> default\.\d\.out', script)) == 3
    assert len(re.findall(r'> tuned\.\d\.out', script)) == 2  # + the measured run
    # ABBA: the second pair loaded first; the measured (loaded) run comes last
    order = re.findall(r'> (default|tuned)\.(\d)\.out', script)
    assert order == [('default', '0'), ('tuned', '0'), ('tuned', '1'), ('default', '1'),
                     ('default', '2')]
    load = json.loads((tuning_dir / 'test-openmpi' / 'recommendation.json').read_text())['load']
    for key in load:
        assert f'export {key}=' in script
        assert all(f'-u {key}' in line for line in runs if 'default.' in line)
    proofs = tuning_files.proofs('openmpi', '4.1.4', RULE)
    for p in proofs:
        (line,) = [x for x in script.splitlines() if f'> proof-{p.name}.out' in x]
        # the proof loads its own file (the canary) in place of the recommendation's
        assert 'OMPI_MCA_coll_tuned_dynamic_rules_filename=' in line
        assert f'proof-{p.name}.txt' in line and 'coll-rules.conf' not in line
    assert isinstance(proofs[0], tuning.ProofRun)


@pytest.mark.skipif('ompi_rules' not in tuning_files.WRITERS, reason='no Open MPI writer yet')
def test_a_copied_tuning_directory_loads_its_own_files(tmp_path):
    """recommendation.json's load names the paths where omb-review tune wrote the files; a copy
    of the directory (deployed, or proven on another cluster) loads its own files, and each
    proof its canary in their place (with the original's paths the canary replaced nothing: the
    mini-cluster's MPICH proofs ran the real file)."""
    copy = shutil.copytree(recommendation(tmp_path / 'orig'), tmp_path / 'copy')
    shutil.rmtree(tmp_path / 'orig')
    dry(tmp_path, '-S', f'tuning_dir={copy}')
    (script,) = [s for s in job_scripts(tmp_path).values() if 'osu_bcast' in s]
    assert ('export OMPI_MCA_coll_tuned_dynamic_rules_filename='
            f'{copy}/test-openmpi/openmpi-4.1.4-coll-rules.conf') in script
    assert str(tmp_path / 'orig') not in script
    (proof,) = tuning_files.proofs('openmpi', '4.1.4', RULE)
    (line,) = [x for x in script.splitlines() if f'> proof-{proof.name}.out' in x]
    assert proof.file_name in line and 'coll-rules.conf' not in line


def test_the_check_validates_one_above_and_below_each_measured_scale_and_between_them():
    from omb_suite.rfm.tuned import scales_with_validation

    assert scales_with_validation([2, 4]) == [2, 3, 4, 5]
    assert scales_with_validation([2, 4, 8, 16]) == [2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17]


def dry_nonblocking(tmp: Path, environ: str, *args: str) -> str:
    out = run_reframe(tmp, '--dry-run', '-p', f'^{environ}$', '-n',
                      'OsuTunedNonBlocking%case=osu_(iallreduce|ibcast)/default', '-E',
                      'scale == 2', *args, registry=two_family_registry(tmp),
                      checks=('explore/osu_tuned.py',))
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    return out.stdout


def test_open_mpis_load_is_measured_on_the_verdict_sets_nonblocking_collective(tmp_path):
    # coll/tuned serves no non-blocking collective (libnbc does): the load does not touch
    # ibcast, skipped; iallreduce is in the verdict set: measured all the same
    tuning_dir = recommendation(tmp_path)
    out = dry_nonblocking(tmp_path, 'test-openmpi', '-S', f'tuning_dir={tuning_dir}',
                          '-S', 'repeats=3')
    assert 'the load does not change ibcast' in out
    assert '-S measure_untouched=1 measures it all the same' in out
    scripts = list(job_scripts(tmp_path).values())
    (script,) = [s for s in scripts if 'osu_iallreduce' in s]
    assert len(re.findall(r'> default\.\d\.out', script)) == 3 and 'proof-' not in script
    assert not [s for s in scripts if 'osu_ibcast' in s]


def test_measure_untouched_measures_what_the_load_leaves_alone(tmp_path):
    tuning_dir = recommendation(tmp_path)
    out = dry_nonblocking(tmp_path, 'test-openmpi', '-S', f'tuning_dir={tuning_dir}',
                          '-S', 'measure_untouched=1')
    assert 'the load does not change' not in out
    assert [s for s in job_scripts(tmp_path).values() if 'osu_ibcast' in s]


def test_mpichs_load_touches_its_nonblocking_collectives_and_they_are_measured(tmp_path):
    # MPICH's selection file replaces MPIR's whole tree, whose branches hold ibcast,
    # iallreduce...: the load touches them
    rule = Rule('bcast', 2, 1, (Step(0, 'binomial'),), 4096)
    tuning_dir = recommendation(tmp_path, environ='test-mpich', family='mpich',
                                version='4.0.2', rules=(rule,))
    touches = json.loads((tuning_dir / 'test-mpich' / 'recommendation.json').read_text())
    assert {'ibcast', 'iallreduce'} <= set(touches['touches'])
    out = dry_nonblocking(tmp_path, 'test-mpich', '-S', f'tuning_dir={tuning_dir}')
    assert 'the load does not change' not in out
    scripts = job_scripts(tmp_path).values()
    assert [s for s in scripts if 'osu_ibcast' in s] and \
        [s for s in scripts if 'osu_iallreduce' in s]


@pytest.mark.parametrize(('program', 'output'), [
    ('osu_ibcast', 'ompi_osu_ibcast_f.txt'), ('osu_ibarrier', 'mpich_osu_ibarrier.txt'),
    ('osu_bcast', 'ompi_osu_bcast_default.txt')])
def test_each_kind_is_compared_by_a_column_its_real_output_has(program, output):
    from omb_suite.osu import catalogue, parsing
    from omb_suite.rfm.tuned import COMPARED

    data = Path(__file__).parent / 'data' / 'osu' / output
    kind = catalogue.get(program).kind
    values = parsing.parse_osu_output(data.read_text()).column(COMPARED[kind])
    assert values and all(v > 0 for v in values.values())
    # a non-blocking collective: the communication alone, not the compute it overlaps
    assert COMPARED['nonblocking'] == 'pure_comm'
    assert set(COMPARED) == {catalogue.get(n).kind
                             for n in catalogue.names('collective', 'nonblocking')}


def test_han_serving_bcast_across_nodes_is_told_apart_from_a_failed_proof():
    """Open MPI 5.0.11 on the mini-cluster, 2 ranks on 2 nodes: han took bcast, so the canary
    in tuned's file never ran (every row printed). The proof fails naming han; the check
    judges those sizes as the library's own only where the job spans more nodes than the rule
    was proven on."""
    from omb_suite.rfm.tuned import not_reached
    from omb_suite.tuning.rules import TuningNotReached

    output = (Path(__file__).parent / 'data' / 'evidence'
              / 'ompi5_bcast_han_two_nodes.txt').read_text()
    rule = Rule('bcast', 2, 1, (Step(0, 'default'), Step(512, 'split_binary_tree'),
                                Step(1024, 'default')), 4096)
    proof = tuning_files.proofs('openmpi', '5.0.11', rule)[0]
    with pytest.raises(TuningNotReached, match='served by han, not tuned') as err:
        proof.expect(output)
    assert err.value.served == 'han'
    said = not_reached(err.value, rule, nodes=2)
    assert said.startswith('bcast: on 2 nodes served by han, not by the rule proven on 1')
    assert not_reached(err.value, rule, nodes=1) is None  # where it was proven: a failure


def test_mpich_naming_another_file_than_the_proofs_fails_the_proof():
    """MPICH 5.0.2 on the mini-cluster, 2 ranks on 2 nodes, the canary never fired: its summary
    names the real file, not the canary. The tuning directory had been copied, and the check
    loaded the paths recommendation.json named, so the canary replaced nothing (the check now
    loads the files of its tuning_dir). A proof that loaded another file than its own fails."""
    from omb_suite.rfm.tuned import not_reached
    from omb_suite.tuning.rules import TuningNotReached, TuningProofError

    output = (Path(__file__).parent / 'data' / 'evidence'
              / 'mpich5_allreduce_canary_two_nodes.txt').read_text()
    rule = Rule('allreduce', 2, 1, (Step(0, 'default'), Step(4096, 'recursive_doubling')), 4096)
    proof = tuning_files.proofs('mpich', '5.0.2', rule)[0]
    with pytest.raises(TuningProofError, match=re.escape(
            "MPICH read /site/tuning/spack-pip-mpich/mpich-5.0.2-coll-selection.json, not the "
            "proof's file proof-canary-allreduce-2-at-4096.txt")) as err:
        proof.expect(output)
    assert not isinstance(err.value, TuningNotReached)
    # had it named the canary (this text edited so): read, the ruled branch not taken there
    read = re.sub(r'^MPIR: .*$', f'MPIR: /stage/{proof.file_name}', output, flags=re.M)
    with pytest.raises(TuningNotReached, match='did not stop at the canary') as err:
        proof.expect(read)
    assert not_reached(err.value, rule, nodes=2).startswith('allreduce: on 2 nodes served by')
    assert not_reached(err.value, rule, nodes=1) is None


def test_mpich_4_proves_the_file_read_by_a_launch_it_refuses():
    """MPICH 4.0.2 names no file it read: its proofs start with the real file holding an
    algorithm no MPICH has at the canary's place, refused at MPI_Init (a real run on local,
    tests/data/evidence/mpich4_bcast_read_proof.txt); then a canary that never fired is judged
    not reached (on more nodes than the rule) instead of failing for want of evidence."""
    from omb_suite.tuning.rules import TuningNotReached, TuningProofError

    rule = Rule('bcast', 2, 1, (Step(0, 'binomial'), Step(2048, 'default')), 4096)
    read, canary = tuning_files.proofs('mpich', '4.0.2', rule)
    assert read.text == canary.text.replace('MPIR_Barrier_intra_smp',
                                            'MPIR_Bcast_intra_omb_read_proof')
    output = (Path(__file__).parent / 'data' / 'evidence'
              / 'mpich4_bcast_read_proof.txt').read_text()
    assert read.expect(output) == ('mpich-file:read (unrecognized key algorithm=MPIR_Bcast_intra_'
                                   'omb_read_proof at MPI_Init)')
    with pytest.raises(TuningProofError, match='did not refuse'):
        read.expect('# OSU MPI Broadcast Latency Test v7.3\n1                       4.21\n')
    with pytest.raises(TuningNotReached, match='did not stop at the canary'):
        canary.expect('# OSU MPI Broadcast Latency Test v7.3\n# Size  Avg\n'
                      '1                       4.21\n')
    assert len(tuning_files.proofs('mpich', '5.0.2', rule)) == 1  # 5.0 names the file it read
