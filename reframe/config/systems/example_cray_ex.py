"""Example HPE Cray EX system with Cray MPICH: CPU nodes of two 64-core AMD EPYC sockets
(SMT2), started either by Slurm's ``srun`` (``--mpi=cray_shasta``, Cray PMI) or, on a
PBS Pro partition, by HPE's PALS ``mpiexec`` (launcher ``pals``:
``src/omb_suite/data/launchers/pals.yaml``; ReFrame's own ``mpiexec`` emits only ``-n``).

The MPI family is ``cray-mpich`` (a record on paper). Under PALS the ``node`` mapping is
skipped with its reason (PALS places ``--ppn`` consecutive ranks per node). Never run on a
real Cray system: dry-run only (tests/test_example_systems.py).
"""

_PROCESSOR = {
    'arch': 'zen3',
    'num_cpus': 256,
    'num_cpus_per_core': 2,
    'num_cpus_per_socket': 128,
    'num_sockets': 2,
}

system = {
    'name': 'example-cray-ex',
    'descr': 'Example HPE Cray EX: 2 x 64-core EPYC nodes, Slingshot, Cray MPICH',
    'hostnames': [r'^uan\d+$'],
    'modules_system': 'lmod',
    'partitions': [
        {
            'name': 'slurm',
            'descr': 'CPU nodes under Slurm, ranks started by srun with Cray PMI',
            'scheduler': 'slurm',
            'launcher': 'srun',
            'access': ['--partition=cpu', '--exclusive'],
            'max_jobs': 4,
            'time_limit': '30m',
            'processor': _PROCESSOR,
            'features': ['cpu'],
            'extras': {'num_nodes': 64, 'srun_mpi': {'cray-mpich': 'cray_shasta'},
                       'link_peak_mbs': 25000},
        },
        {
            'name': 'pbs',
            'descr': 'CPU nodes under PBS Pro, ranks started by PALS mpiexec',
            'scheduler': 'pbs',
            'launcher': 'pals',
            'access': ['-q workq'],
            'max_jobs': 4,
            'time_limit': '30m',
            'processor': _PROCESSOR,
            'features': ['cpu'],
            'extras': {'num_nodes': 64, 'link_peak_mbs': 25000},
        },
    ],
}
