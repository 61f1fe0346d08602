"""A budget of node-minutes: its spelling, the order it takes cases in, what it buys."""

from __future__ import annotations

import pytest

from omb_suite.cost import budget
from omb_suite.cost.budget import BudgetError, Case


def case(bench: str, alg: str | None, ranks: int, nodes: int, minutes: float,
         env: str = 'ompi') -> Case:
    name = f'T %case={bench}/{alg} %scale={ranks}'
    return Case(key=('sys', 'part', env, name), family=('sys:part', env, f'T {bench}/{alg}'),
                benchmark=bench, algorithm=alg, num_nodes=nodes, num_tasks=ranks,
                node_minutes=minutes)


@pytest.mark.parametrize(('text', 'minutes'), [
    ('600', 600), ('600node-min', 600), ('600 node-minutes', 600), ('2.5', 2.5),
    ('10node-h', 600), ('10 node-hours', 600), ('1nh', 60), ('0', 0),
])
def test_a_budget_is_node_minutes_or_node_hours(text, minutes):
    assert budget.parse(text) == minutes


@pytest.mark.parametrize('text', ['-5', '10h', '600s', '600 minutes', 'lots', '', '1e3'])
def test_a_negative_budget_or_another_unit_is_refused_with_the_form(text):
    with pytest.raises(BudgetError, match=r'-S budget=NODE_MINUTES \(e.g. -S budget=600\)'):
        budget.parse(text)


def test_a_campaign_name_must_be_able_to_name_a_tag():
    assert budget.campaign_name('ompi5-tuning.v2') == 'ompi5-tuning.v2'
    with pytest.raises(BudgetError, match='-S campaign=ompi5-tuning'):
        budget.campaign_name('my campaign')


def test_defaults_at_one_rank_count_per_power_of_two_node_count_come_first():
    cases = [
        case('osu_bcast', 'binomial', 128, 1, 1.0),
        case('osu_bcast', 'default', 64, 1, 1.0),      # not the largest on 1 node
        case('osu_bcast', 'default', 128, 1, 1.0),
        case('osu_bcast', 'default', 384, 3, 1.0),     # 3 nodes: not a power of two
        case('osu_bcast', 'default', 256, 2, 1.0),
        case('osu_allreduce', 'ring', 128, 1, 1.0),
        case('osu_allreduce', 'default', 128, 1, 1.0),
        case('osu_latency', None, 2, 1, 1.0),
        case('osu_bcast', 'binomial', 64, 1, 1.0),
    ]
    ranked = budget.rank(cases, winners={('osu_allreduce', 'ring')})
    order = [(c.benchmark, c.algorithm, c.num_tasks) for _, c in ranked]
    assert [t for t, _ in ranked] == [0, 0, 0, 0, 1, 1, 2, 3, 4]
    # the families take turns within a tier, fewest nodes first
    assert order[:4] == [('osu_bcast', 'default', 128), ('osu_allreduce', 'default', 128),
                         ('osu_latency', None, 2), ('osu_bcast', 'default', 256)]
    assert order[6:] == [('osu_allreduce', 'ring', 128), ('osu_bcast', 'binomial', 128),
                         ('osu_bcast', 'binomial', 64)]


def test_a_budget_buys_in_rank_order_passing_over_what_does_not_fit():
    cases = [case('osu_bcast', 'default', 128, 1, 5.0),
             case('osu_bcast', 'default', 256, 2, 8.0),
             case('osu_bcast', 'binomial', 128, 1, 2.0)]
    sel = budget.select(cases, 8.0)
    assert [c.num_tasks for c in sel.chosen] == [128, 128]    # 5 + 2: the 8 did not fit
    assert [c.algorithm for c in sel.chosen] == ['default', 'binomial']
    assert sel.bought == 7.0 and sel.rest == 8.0
    assert budget.below_cheapest(sel) is None
    text = '\n'.join(budget.summary(sel))
    assert ('Budget 8 node-minutes: 2 case(s) selected, predicted 7.0 node-minutes; '
            '1 left out') in text
    assert 'left out first: T %case=osu_bcast/default %scale=256' in text
    assert budget.select(cases, None).chosen == [c for _, c in budget.rank(cases)]


def test_a_budget_below_the_cheapest_case_says_so():
    sel = budget.select([case('osu_bcast', 'default', 128, 1, 5.0),
                         case('osu_bcast', 'default', 2, 1, 0.4)], 0.3)
    assert sel.chosen == []
    why = budget.below_cheapest(sel)
    assert 'budget=0.3 node-minutes is below the cheapest selected case' in why
    assert 'T %case=osu_bcast/default %scale=2' in why and 'at least 0.4' in why
    assert budget.below_cheapest(budget.select([], 0.3)) is None  # nothing left: no error


def test_a_campaign_says_what_is_done_spent_and_to_go():
    todo = [case('osu_bcast', 'default', 128, 1, 4.0), case('osu_bcast', 'default', 256, 2, 4.0),
            case('osu_bcast', 'binomial', 128, 1, 4.0)]
    sel = budget.select(todo, 5.0)
    sel.done = [case('osu_latency', None, 2, 1, 1.0)]
    line = budget.summary(sel, 'study', spent=1.2)[-1]
    assert line == ('campaign study: 1 of 4 case(s) done, 3 left; 1.2 node-minutes spent '
                    '(measured), 12.0 predicted to go, at least 3 session(s) to go at this '
                    'budget, this one included')


def test_a_finished_campaign_says_so():
    sel = budget.select([], 5.0)
    sel.done = [case('osu_latency', None, 2, 1, 1.0)]
    assert budget.summary(sel, 'study', spent=1.2)[-1] == (
        'campaign study: complete, 1 case(s) done, 1.2 node-minutes spent (measured); '
        'nothing left to run')


def test_nothing_to_price_is_said_as_such_not_as_a_finished_campaign():
    assert budget.summary(budget.select([], 600.0), 'proof') == [
        'Budget: no selected case can be priced (none selected, or their setup skips each one '
        'here): nothing to choose from']


def test_a_campaign_no_case_of_which_fits_the_budget_does_not_promise_sessions():
    todo = [case('osu_bcast', 'default', 128, 1, 4.0)]
    sel = budget.select(todo, 2.0)
    sel.done = [case('osu_latency', None, 2, 1, 1.0)]
    line = budget.summary(sel, 'study', spent=1.2)[-1]
    assert line.endswith('predicted to go, and no case left fits this budget: raise it to go on')
    assert 'session(s) to go' not in line


def test_a_rehearsed_campaign_does_not_call_its_dry_runs_measured():
    sel = budget.select([], 5.0)
    sel.done = [case('osu_latency', None, 2, 1, 1.0)]
    assert '1.2 node-minutes spent (rehearsed in dry runs: predicted, not measured)' in \
        budget.summary(sel, 'study', spent=1.2, rehearsal=True)[-1]
