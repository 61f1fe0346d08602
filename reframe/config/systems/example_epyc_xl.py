"""Example EPYC site at full scale: 1024 nodes x 2 x 64 cores (131072 ranks), 512 GiB per node,
HDR InfiniBand, as a large AMD EPYC machine looks. For the scale audit
(tests/cost/test_scale_audit.py) and as the model of what a site declares beyond its topology
(docs/systems.md):

- ``memory_per_node_gib``: memory of one node; OSU's ``-M`` is raised (or lowered) so that the
  benchmark buffers of all ranks of a node fit half of it, and sizes OSU then cannot run are
  reported as not measured (``omb_suite.osu.limits``);
- ``perf_model``: latency and bandwidth per link and one launch's start-up, for the predicted
  wall time, node-minutes and time limits of a first run, before the suite has perflogs of its
  own (``omb_suite.cost.model``).

Select with ``--system example-epyc-xl`` for a dry run.
"""

_SRUN_MPI = {'openmpi': 'pmix', 'mpich': 'pmi2', 'mvapich': 'pmi2'}

system = {
    'name': 'example-epyc-xl',
    'descr': 'Example EPYC machine, 1024 nodes x 2 x 64 cores, 512 GiB, InfiniBand HDR',
    'hostnames': [r'^login\d+\.xl\.epyc\.example$'],
    'modules_system': 'nomod',
    'partitions': [
        {
            'name': 'compute',
            'descr': 'all 1024 EPYC nodes',
            'scheduler': 'slurm',
            'launcher': 'srun',
            'access': ['--partition=compute', '--exclusive'],
            'max_jobs': 16,
            'processor': {'arch': 'zen3', 'num_cpus': 128, 'num_cpus_per_core': 1,
                          'num_cpus_per_socket': 64, 'num_sockets': 2},
            'features': ['cpu', 'ib'],
            'extras': {
                'num_nodes': 1024,
                'srun_mpi': _SRUN_MPI,
                'link_peak_mbs': 25000,
                'memory_per_node_gib': 512,
                'perf_model': {
                    'latency_us': {'intra_socket': 0.3, 'inter_socket': 0.6, 'inter_node': 1.6},
                    'bandwidth_mbs': {'intra_socket': 12000, 'inter_socket': 9000,
                                      'inter_node': 23000},
                    'startup_s': 2.0,
                    'startup_per_node_s': 0.01,
                },
            },
        },
    ],
}
