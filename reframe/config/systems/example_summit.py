"""Example LSF system with IBM's ``jsrun`` and Spectrum MPI, shaped like OLCF's Summit
(from a user's bandwidth results): two POWER9 sockets of 21 cores for applications (SMT4, 84
CPUs per socket), 6 V100 GPUs per node.

Jobs are LSF batch jobs (``#BSUB -nnodes``); every launch is ``jsrun`` with resource sets
(``src/omb_suite/data/launchers/jsrun.yaml``): a set cannot span sockets, so ``inter_socket``
is two sets of a whole socket's 21 cores. The ``socket`` and ``node`` mappings are skipped
with jsrun's reason. The MPI family is ``spectrum-mpi`` (a record on paper). Never run on a
real LSF system: dry-run only (tests/test_example_systems.py).
"""

system = {
    'name': 'example-summit',
    'descr': 'Example Summit-like LSF system: 2 x 21 POWER9 cores, 6 GPUs per node, jsrun',
    'hostnames': [r'^login\d+\.summit\.example$'],
    'modules_system': 'lmod',
    'partitions': [
        {
            'name': 'batch',
            'descr': 'POWER9 + V100 nodes, ranks placed by jsrun resource sets',
            'scheduler': 'lsf',
            'launcher': 'jsrun',
            'access': ['-P PROJECT123'],
            'max_jobs': 4,
            'time_limit': '30m',
            'processor': {
                'arch': 'power9',
                'num_cpus': 168,
                'num_cpus_per_core': 4,
                'num_cpus_per_socket': 84,
                'num_sockets': 2,
            },
            'devices': [{'type': 'gpu', 'arch': 'sm_70', 'num_devices': 6}],
            'features': ['cpu', 'gpu'],
            'extras': {'num_nodes': 16},
        },
    ],
}
