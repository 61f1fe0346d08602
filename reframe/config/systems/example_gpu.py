"""Example GPU Slurm cluster: 4 GPUs per node, as in the procurement description.

Nothing here matches a real host name; select it with ``--system example-gpu`` for a dry
run (``--dry-run``) of the GPU-buffer and procurement checks. For a real site copy it to
``systems/<site>.py`` and edit (docs/systems.md, docs/gpu-and-procurement.md).

What the GPU checks read from a partition:

- ``features: ['gpu']``: device-buffer variants (``buffers`` ``D D``, ``H D``, ``D H``) and
  the GPU procurement cases exist only on such partitions;
- ``devices: [{'type': 'gpu', 'num_devices': N}]``: GPUs per node (the one-to-all pairs
  0,1 ... 0,N-1 and the device list every rank sees).
"""

_PROCESSOR = {
    # Typed in for the example (2 x 24-core AMD EPYC, like a 4-GPU A100 node); on a real
    # site use `reframe --detect-host-topology` on a compute node.
    'arch': 'zen2',
    'num_cpus': 48,
    'num_cpus_per_core': 1,
    'num_cpus_per_socket': 24,
    'num_sockets': 2,
}

_SRUN_MPI = {'openmpi': 'pmix', 'mpich': 'pmi2', 'mvapich': 'pmi2'}

system = {
    'name': 'example-gpu',
    'descr': 'Example GPU cluster (4 GPUs per node), Slurm + srun',
    'hostnames': [r'^login\d+\.gpu-cluster\.example$'],
    # the site's MPI and OSU come from Lmod modules (omb-setup --module, docs/systems.md)
    'modules_system': 'lmod',
    'partitions': [
        {
            'name': 'gpu',
            'descr': 'GPU nodes: 4 GPUs per node, ranks started by srun',
            'scheduler': 'slurm',
            'launcher': 'srun',
            'access': ['--partition=gpu', '--gres=gpu:4', '--exclusive'],
            'max_jobs': 8,
            'time_limit': '20m',
            'processor': _PROCESSOR,
            'devices': [{'type': 'gpu', 'arch': 'sm_80', 'num_devices': 4}],
            'features': ['gpu'],
            'extras': {'num_nodes': 16, 'srun_mpi': _SRUN_MPI},
        },
        {
            'name': 'cpu',
            'descr': 'CPU nodes, ranks started by srun',
            'scheduler': 'slurm',
            'launcher': 'srun',
            'access': ['--partition=cpu', '--exclusive'],
            'max_jobs': 8,
            'time_limit': '20m',
            'processor': _PROCESSOR,
            'features': ['cpu'],
            'extras': {'num_nodes': 128, 'srun_mpi': _SRUN_MPI},
        },
    ],
}
