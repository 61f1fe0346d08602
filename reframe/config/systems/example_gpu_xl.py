"""Example GPU site at full scale: 1024 nodes x 4 GPUs, 2 x 32 cores, 512 GiB per node,
Slingshot-class network. For the scale audit (tests/cost/test_scale_audit.py); what
``memory_per_node_gib`` and ``perf_model`` mean: example_epyc_xl.py and docs/systems.md.

Select with ``--system example-gpu-xl`` for a dry run.
"""

_SRUN_MPI = {'openmpi': 'pmix', 'mpich': 'pmi2', 'mvapich': 'pmi2'}

system = {
    'name': 'example-gpu-xl',
    'descr': 'Example GPU machine, 1024 nodes x 4 GPUs, 2 x 32 cores, 512 GiB',
    'hostnames': [r'^login\d+\.xl\.gpu\.example$'],
    'modules_system': 'nomod',
    'partitions': [
        {
            'name': 'gpu',
            'descr': 'all 1024 GPU nodes, ranks started by srun',
            'scheduler': 'slurm',
            'launcher': 'srun',
            'access': ['--partition=gpu', '--gres=gpu:4', '--exclusive'],
            'max_jobs': 16,
            'processor': {'arch': 'zen3', 'num_cpus': 64, 'num_cpus_per_core': 1,
                          'num_cpus_per_socket': 32, 'num_sockets': 2},
            'devices': [{'type': 'gpu', 'arch': 'sm_90', 'num_devices': 4}],
            'features': ['gpu'],
            'extras': {
                'num_nodes': 1024,
                'srun_mpi': _SRUN_MPI,
                'memory_per_node_gib': 512,
                'perf_model': {
                    'latency_us': {'intra_socket': 0.4, 'inter_socket': 0.7, 'inter_node': 2.2},
                    'bandwidth_mbs': {'intra_socket': 10000, 'inter_socket': 8000,
                                      'inter_node': 22000},
                    'startup_s': 3.0,
                    'startup_per_node_s': 0.02,
                },
            },
        },
    ],
}
