"""Example AMD EPYC Slurm cluster: two 64-core sockets per node, one InfiniBand HCA
attached near cores 96-111 (NUMA node 6), as in a user's notes.

Select with ``--system example-epyc`` for a dry run. The ``nic_near`` partition pins
the inter-node pair to the cores next to the HCA (the user measured 1.55 us vs 1.77 us
for a 2-rank bcast); ``compute`` uses the default placements.
"""

_PROCESSOR = {
    'arch': 'zen3',
    'num_cpus': 128,
    'num_cpus_per_core': 1,
    'num_cpus_per_socket': 64,
    'num_sockets': 2,
}

_SRUN_MPI = {'openmpi': 'pmix', 'mpich': 'pmi2', 'mvapich': 'pmi2'}

_BASE = {
    'scheduler': 'slurm',
    'launcher': 'srun',
    'access': ['--partition=EPYC', '--exclusive'],
    'max_jobs': 4,
    'time_limit': '15m',
    'processor': _PROCESSOR,
    'features': ['cpu', 'ib'],
    'env_vars': [['UCX_NET_DEVICES', 'mlx5_0:1']],
}

system = {
    'name': 'example-epyc',
    'descr': 'Example EPYC cluster, 2 x 64 cores per node, InfiniBand near cores 96-111',
    'hostnames': [r'^login\d+\.epyc\.example$'],
    # the site's MPI and OSU come from Lmod modules (omb-setup --module, docs/systems.md)
    'modules_system': 'lmod',
    'partitions': [
        {
            **_BASE,
            'name': 'compute',
            'descr': 'EPYC nodes, default placements',
            'extras': {'num_nodes': 8, 'srun_mpi': _SRUN_MPI, 'link_peak_mbs': 25000},
        },
        {
            **_BASE,
            'name': 'nic_near',
            'descr': 'EPYC nodes, inter-node ranks on the cores next to the HCA',
            'extras': {
                'num_nodes': 8,
                'srun_mpi': _SRUN_MPI,
                'link_peak_mbs': 25000,
                'launcher_overrides': {
                    'srun': {'inter_node': ['--distribution=cyclic', '--cpu-bind=map_cpu:96']},
                    'ompi': {'inter_node': ['--map-by', 'node', '--cpu-set', '96-111',
                                            '--bind-to', 'core']},
                },
            },
        },
    ],
}
