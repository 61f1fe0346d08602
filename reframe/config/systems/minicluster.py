"""``minicluster``: the two-node Slurm 22.05 test cluster of ``tests/cluster/`` (one
machine, two network namespaces ``node1``/``node2`` joined by a veth ``rig0``).

    tests/cluster/up && source tests/cluster/env.sh
    reframe -C reframe/config/settings.py -c reframe/checks --system minicluster -r

One Slurm job for a whole run (partition ``alloc``): start ReFrame inside an allocation; every
test is a job step of it (``srun`` with the test's tasks and nodes), one at a time:

    salloc -N 2 -p compute reframe -C reframe/config/settings.py -c reframe/checks \
        --system minicluster:alloc -r

Traffic between the nodes is TCP over ``rig0``; within a node, shared memory. The two
nodes share this machine's cores, so one job runs at a time, busy-polling ranks yield,
and nothing is bound (Slurm's ``task/none``; Open MPI ``mpirun`` would otherwise pin each
node's rank to core 0, i.e. both ranks on one physical core).
"""

from reframe.utility.cpuinfo import cpuinfo

from omb_suite.setup.environs import detected_modules_system

_NET_ENV = [
    ['OMPI_ALLOW_RUN_AS_ROOT', '1'],
    ['OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', '1'],
    # Open MPI: TCP between nodes, shared memory (vader) within one, over rig0 only
    ['OMPI_MCA_pml', 'ob1'],
    ['OMPI_MCA_btl', 'tcp,self,vader'],
    ['OMPI_MCA_btl_tcp_if_include', 'rig0'],
    ['OMPI_MCA_oob_tcp_if_include', 'rig0'],
    ['OMPI_MCA_mpi_yield_when_idle', '1'],
    # MPICH ch4:ucx: UCX would spot that both "nodes" are one host and use shared memory
    ['UCX_TLS', 'tcp,self'],
    ['UCX_NET_DEVICES', 'rig0'],
]

_PARTITION = {
    'scheduler': 'squeue',           # no slurmdbd, so no sacct
    'processor': cpuinfo(),          # both nodes are this machine
    'features': ['cpu'],
    'max_jobs': 1,
    'time_limit': '5m',
    # A job hit by a node failure must fail (and name the node), not be requeued by
    # Slurm and silently rerun: ReFrame's --max-retries decides about re-running.
    'access': ['--partition=compute', '--no-requeue'],
    'env_vars': _NET_ENV,
}

system = {
    'name': 'minicluster',
    'descr': 'Two-node Slurm test cluster in network namespaces (tests/cluster/up)',
    'hostnames': [r'^node\d+$'],
    # lmod / envmod when this shell has that module command (environments from modules
    # need one: omb-setup --module, docs/systems.md), else nomod
    'modules_system': detected_modules_system(),
    'partitions': [
        {
            **_PARTITION,
            'name': 'compute',
            'descr': 'node1 + node2, ranks started by srun',
            'launcher': 'srun',
            'extras': {
                'num_nodes': 2,
                'nodes_per_machine': 2,
                'fleet_tolerance': 5.0,         # as the alloc partition's (below)
                'srun_mpi': {'openmpi': 'pmix', 'mpich': 'pmi2'},
            },
        },
        {
            # inside `salloc -N 2` (or an sbatch script): no job per test, a step per test
            'name': 'alloc',
            'descr': 'node1 + node2 of the allocation ReFrame runs in, ranks started by srun',
            'scheduler': 'local',
            'launcher': 'srunalloc',
            # one core per node: both nodes share this machine's cores, and two busy-polling
            # ranks on one core measure the scheduler (MPICH: 50 ms per 4-rank allreduce)
            'processor': {'num_cpus': 1, 'num_cpus_per_core': 1, 'num_sockets': 1,
                          'num_cpus_per_socket': 1},
            'features': ['cpu'],
            'max_jobs': 1,                   # steps never share nodes or cores
            'time_limit': '3m',
            'env_vars': _NET_ENV,
            'extras': {
                'num_nodes': 2,
                'nodes_per_machine': 2,  # both nodes' ranks spin on this machine's CPUs
                # --mode fleet: one node's figure within itself moved 3x with the machine's
                # other work (measured); a slow node or link here is 10x or more
                'fleet_tolerance': 5.0,
                'srun_mpi': {'openmpi': 'pmix', 'mpich': 'pmi2'},
                # measured here, inter-node through srun (benchmarks/verdict_power.py measure
                # --launch 'srun -N 2 -n 2 --ntasks-per-node=1 --mpi=pmix', then fit:
                # tests/data/iterations/osu73_openmpi_minicluster_spread.json)
                'iteration_shrink': {'latency': {'small': 0.35, 'large': 0.17},
                                     'bandwidth': {'small': 0.43, 'large': 0.28},
                                     'collective': {'small': 0.32, 'large': 0.25}},
            },
        },
        {
            **_PARTITION,
            'name': 'compute-mpirun',
            'descr': 'node1 + node2, ranks started by the MPI library\'s mpirun',
            'launcher': 'mpirun',
            'extras': {
                'num_nodes': 2,
                'nodes_per_machine': 2,
                'launcher_overrides': {
                    'ompi': {
                        'intra_socket': ['--map-by', 'core', '--bind-to', 'none'],
                        'inter_node': ['--map-by', 'node', '--bind-to', 'none'],
                    },
                    'hydra': {
                        'intra_socket': ['-bind-to', 'none'],
                        'inter_node': ['-ppn', '1', '-bind-to', 'none'],
                    },
                },
            },
        },
    ],
}
