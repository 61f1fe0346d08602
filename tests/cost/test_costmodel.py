"""The cost model (omb_suite.cost.model) and its fit from the suite's own perflogs
(omb_suite.cost.fit, on perflogs written by real ReFrame runs on `local`)."""

from __future__ import annotations

import pytest
from testdata import REPO

from omb_suite.cost import fit as costfit
from omb_suite.cost import model as costmodel
from omb_suite.osu import catalogue
from omb_suite.osu import limits as osu_limits

OURS = REPO / 'tests' / 'review' / 'data' / 'ours' / 'local' / 'default'
ONE_NODE = costmodel.Shape(2, 1, 2, 2, 'intra_socket')


def real_records():
    rows = []
    for path in sorted(OURS.glob('*.log')):
        found, problems = costfit.read_perflog(path)
        assert not problems
        rows += found
    return rows


def fitted():
    return costfit.fit(real_records(), costmodel.model_for({}), cores_per_node=2,
                       cores_per_socket=2, sockets=1)


def test_the_fit_takes_latency_from_osu_latency_and_corrections_per_scale():
    model = fitted()
    assert model.latency_us['intra_socket'] == pytest.approx(0.2, rel=0.5)
    assert ('osu_bcast', 2, 'intra_socket') in model.corrections
    assert ('osu_bcast', 4, 'intra_socket') in model.corrections
    assert model.source.startswith('fitted from')


def test_a_perflog_without_measurements_fits_nothing():
    """A dry run's perflog (values null) is no fit: the defaults stay, and limit nothing."""
    start = {**real_records()[0], 'benchmark': 'osu_init', 'perf_var': 'init_avg'}
    nulls = [{**r, 'perf_value': 'null'} for r in [*real_records(), start]]
    base = costmodel.model_for({})
    assert costfit.fit(nulls, base, cores_per_node=2, cores_per_socket=2, sockets=1) is base


def test_the_fitted_model_reproduces_the_measured_latencies():
    """Cross-check: the model's bcast latency at 2 ranks is what the perflog says."""
    model = fitted()
    for record in real_records():
        if record['benchmark'] == 'osu_bcast' and record['num_tasks'] == '2' \
                and record['algorithm'] == 'default' and record['perf_var'] == 'avg_latency_8':
            assert costmodel.unit_us('osu_bcast', 8, ONE_NODE, model) == pytest.approx(
                float(record['perf_value']), rel=0.5)


def test_osus_loop_makes_large_sizes_cheap_in_iterations():
    model = costmodel.model_for({})
    sizes = osu_limits.sizes_between(1, 2**20)
    got = costmodel.predict('osu_allreduce', sizes, ONE_NODE, model)
    assert got.seconds == pytest.approx(got.startup_s + got.loop_s)
    assert [s for s, _ in got.ends] == sizes
    assert got.until(8192) < got.until(16384) < got.seconds + 1e-9
    fewer = costmodel.predict('osu_allreduce', sizes, ONE_NODE, model, warmup=1, iterations=10)
    assert fewer.loop_s < got.loop_s / 10


def test_scale_costs_more_and_alltoall_grows_fastest():
    model = costmodel.model_for({})
    sizes = osu_limits.sizes_between(1, 2**19)
    wide = costmodel.Shape(1024, 8, 128, 128, 'inter_node')
    small = costmodel.predict('osu_alltoall', sizes, ONE_NODE, model).loop_s
    big = costmodel.predict('osu_alltoall', sizes, wide, model).loop_s
    bcast = costmodel.predict('osu_bcast', sizes, wide, model).loop_s
    assert big > 100 * small and big > 10 * bcast


def test_a_declared_model_overrides_the_defaults_and_bad_ones_say_what_is_wrong():
    model = costmodel.model_for({'perf_model': {'latency_us': {'inter_node': 1.2},
                                                'startup_s': 3}})
    assert model.latency_us['inter_node'] == 1.2 and model.startup_s == 3
    assert model.latency_us['intra_socket'] == 0.5 and model.source == 'declared'
    # nothing declared: the built-in defaults, which limit nothing (a guess must not stop a
    # first run); this once said 'declared' for every partition
    assert costmodel.model_for({}).source == 'default'
    assert costmodel.model_for({'perf_model': {}}).source == 'default'
    with pytest.raises(ValueError, match='unknown keys'):
        costmodel.model_for({'perf_model': {'latency': 1}})
    with pytest.raises(ValueError, match='positive value per link'):
        costmodel.model_for({'perf_model': {'bandwidth_mbs': {'inter_node': 0}}})


def test_the_limit_is_a_multiple_of_the_prediction_with_a_floor():
    model = costmodel.model_for({})
    multiple, floor, _ = costmodel.limit_rule()
    quick = costmodel.predict('osu_init', [], ONE_NODE, model)
    assert costmodel.time_limit(quick) == floor
    slow = costmodel.Prediction(1000.0, 1.0, 999.0, [(1, 500.0), (2, 1000.0)])
    assert costmodel.time_limit(slow) == int(multiple * 1000)


def test_a_stopped_test_says_how_much_slower_the_network_ran():
    pred = costmodel.Prediction(20.0, 1.0, 19.0, [(1, 10.0), (2, 20.0)])
    text = costmodel.slower_message(pred, 60, 60, 1)
    assert 'predicted 20.0 s' in text and 'at least 3.0 x slower' in text
    assert 'at least 6.0 x' in costmodel.slower_message(pred, 60, 60, None)
    assert 'printed no result row' in costmodel.slower_message(pred, 60, 60, None)


def test_a_limit_not_from_the_prediction_claims_no_pace():
    pred = costmodel.Prediction(20.0, 1.0, 19.0, [(1, 10.0), (2, 20.0)])
    text = costmodel.slower_message(pred, 150, 151, 1, basis="ReFrame's 180 s less 30 s")
    assert text.startswith("stopped at its time limit of 150 s (ReFrame's 180 s less 30 s)")
    assert 'got up to 1 B of an incomplete result' in text and 'slower' not in text


def test_a_test_stopped_after_its_whole_result_blames_no_network():
    pred = costmodel.Prediction(2.0, 1.0, 1.0, [])
    text = costmodel.hung_after_result_message('osu_barrier', pred, 60, 61)
    assert text.startswith('osu_barrier printed its whole result, then did not exit')
    assert 'after 61 s (predicted 2.0 s)' in text and 'the network was not slow' in text


def test_malformed_perflog_lines_are_reported_not_dropped(tmp_path):
    """Synthetic: one line with a field missing."""
    log = tmp_path / 'x.log'
    good = (OURS / 'OsuCollective.log').read_text().splitlines()[:2]
    log.write_text('\n'.join([*good, good[1].rsplit('|', 1)[0]]) + '\n')
    rows, problems = costfit.read_perflog(log)
    assert len(rows) == 1 and len(problems) == 1 and ':3:' in problems[0]


def test_every_collective_of_the_catalogue_has_a_cost():
    model = costmodel.model_for({})
    shape = costmodel.Shape(64, 2, 32, 32, 'inter_node')
    for name in catalogue.names(*catalogue.COLLECTIVE_KINDS):
        assert costmodel.modelled_unit_us(name, 1024, shape, model) > 0, name


def test_the_fit_learns_a_two_pass_point_to_point_program():
    """osu_partitioned_latency reports the non-blocking figures (pure_comm, overall): its unit
    is their mean, as for a non-blocking collective, so its first run corrects the model."""
    run = {'benchmark': 'osu_partitioned_latency', 'num_tasks': '2', 'num_nodes': '1',
           'num_tasks_per_node': '2', 'placement': 'intra_socket', 'algorithm': '',
           'display_name': 'OsuPt2PtMore %benchmark=osu_partitioned_latency',
           'job_completion_time': '2026-11-28T20:00:00+00:00', 'result': 'pass'}
    records = [{**run, 'perf_var': f'{var}_{size}', 'perf_value': str(value)}
               for size, pure, overall in [(8, 30.0, 40.8), (1048576, 12000.0, 14600.0)]
               for var, value in [('pure_comm', pure), ('overall', overall)]]
    assert costfit.measured_unit(records[0]) == (8, 30.0)
    assert costfit.measured_unit(records[1]) is None
    assert costfit.measurable('osu_partitioned_latency') and not costfit.measurable('osu_hello')
    model = costfit.fit(records, costmodel.model_for({}), cores_per_node=2,
                        cores_per_socket=2, sockets=1)
    keys = [k for k in model.corrections if k[0] == 'osu_partitioned_latency']
    assert keys, model.corrections
