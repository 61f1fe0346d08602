"""``flux-test``: the ``example-flux`` shape (scheduler ``local``, launcher ``flux``: every test
a ``flux run`` of the instance ReFrame runs in, the node count from the instance) on real Flux
instances of this machine, started by ``tests/flux/instance`` with the flux-core that
``scripts/build-flux.sh`` builds:

    tests/flux/instance -- .venv/bin/reframe -C reframe/config/settings.py \
        -c reframe/checks --system flux-test:host -r
    tests/flux/instance --minicluster -- .venv/bin/reframe -C reframe/config/settings.py \
        -c reframe/checks --system flux-test:minicluster -r

``host``: ``flux start --test-size=1``, one broker owning this machine's cores (placements
within a node). ``minicluster``: one broker on each node of the Slurm mini-cluster
(``tests/cluster/up``), started by ``srun --mpi=pmi2``; each broker owns one core of its own
(node1 core 0, node2 core 1: the nodes share this machine's cores, and Flux binds each task to
the cores its broker allocates, so two brokers owning every core would put both ranks of an
inter-node pair on core 0), and the MPI libraries talk over ``rig0``, as on ``minicluster``.
Never selected by host name: name it with ``--system``.
"""

import importlib.util
from pathlib import Path

from reframe.utility.cpuinfo import cpuinfo


def _minicluster_env() -> list:
    """The mini-cluster's network settings (``minicluster.py``, one definition)."""
    spec = importlib.util.spec_from_file_location(
        'omb_system_minicluster_env', Path(__file__).with_name('minicluster.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module._NET_ENV


_ROOT_OK = [['OMPI_ALLOW_RUN_AS_ROOT', '1'], ['OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', '1']]

_STEPS = {
    'scheduler': 'local',
    'launcher': 'flux',
    'max_jobs': 1,                   # steps never share cores
    'features': ['cpu'],
}

system = {
    'name': 'flux-test',
    'descr': 'Flux instances of this machine (tests/flux/instance): ReFrame inside, flux run',
    'hostnames': [],              # never selected by host name: --system flux-test:...
    'modules_system': 'nomod',
    'partitions': [
        {
            **_STEPS,
            'name': 'host',
            'descr': 'one broker, this machine (flux start --test-size=1)',
            'time_limit': '5m',
            'processor': cpuinfo(),
            'env_vars': _ROOT_OK,
            'extras': {'num_nodes': 1},
        },
        {
            **_STEPS,
            'name': 'minicluster',
            'descr': 'one broker per mini-cluster node, started by srun (one core each)',
            # as minicluster:alloc: a known MPICH hang after the result costs 150 s, not 270
            'time_limit': '3m',
            'processor': {'num_cpus': 1, 'num_cpus_per_core': 1, 'num_sockets': 1,
                          'num_cpus_per_socket': 1},
            'env_vars': _minicluster_env(),
            'extras': {
                'num_nodes': 2,
                'nodes_per_machine': 2,  # both nodes' ranks spin on this machine's CPUs
                # the record's CPU maps name OS CPUs from 0 on every node, but node2's broker
                # owns CPU 1: bind each task to the core its broker allocated instead
                'launcher_overrides': {'flux': {
                    'core': ['-x', '-o', 'cpu-affinity=per-task'],
                    'node': ['--taskmap=cyclic', '-x', '-o', 'cpu-affinity=per-task'],
                }},
            },
        },
    ],
}
