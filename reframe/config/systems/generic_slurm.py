"""Template of a Slurm cluster: copy to ``systems/<site>.py`` and edit (docs/systems.md).

Nothing here matches a real host name; select it with ``--system generic-slurm`` to
try a dry run (``--dry-run``) and see the job scripts it would submit.
"""

_PROCESSOR = {
    # Typed in for the template; on a real site use ReFrame's detection instead:
    # `reframe --detect-host-topology` on a compute node, or `remote_detect`.
    'arch': 'zen3',
    'num_cpus': 128,
    'num_cpus_per_core': 1,
    'num_cpus_per_socket': 64,
    'num_sockets': 2,
}

system = {
    'name': 'generic-slurm',
    'descr': 'Template Slurm cluster (copy me)',
    'hostnames': [r'^login\d+\.cluster\.example$'],
    # the site's MPI and OSU come from Lmod modules (omb-setup --module, docs/systems.md)
    'modules_system': 'lmod',
    'partitions': [
        {
            'name': 'cpu',
            'descr': 'CPU nodes, ranks started by srun',
            'scheduler': 'slurm',
            'launcher': 'srun',
            'access': ['--partition=cpu', '--exclusive'],
            'max_jobs': 8,
            'time_limit': '10m',
            'processor': _PROCESSOR,
            'features': ['cpu'],
            'extras': {
                'num_nodes': 64,
                # srun's PMI plugin per MPI family (`srun --mpi=list` shows yours)
                'srun_mpi': {'openmpi': 'pmix', 'mpich': 'pmi2', 'mvapich': 'pmi2'},
            },
        },
        {
            # The whole run as ONE Slurm job: start ReFrame inside an allocation
            #   salloc -N 64 --exclusive -p cpu reframe ... --system generic-slurm:alloc -r
            # (or OMB_ALLOC="salloc ..." scripts/cluster-ci.sh generic-slurm:alloc); every
            # test is a job step (srun with its tasks and nodes), one at a time.
            'name': 'alloc',
            'descr': 'CPU nodes of the allocation ReFrame runs in, one step per test',
            'scheduler': 'local',
            'launcher': 'srunalloc',
            'max_jobs': 1,
            'time_limit': '10m',
            'processor': _PROCESSOR,
            'features': ['cpu'],
            'extras': {
                'num_nodes': 64,          # outside an allocation; inside, its -N
                'srun_mpi': {'openmpi': 'pmix', 'mpich': 'pmi2', 'mvapich': 'pmi2'},
            },
        },
        {
            'name': 'cpu-mpirun',
            'descr': 'CPU nodes, ranks started by the MPI library\'s mpirun',
            'scheduler': 'slurm',
            'launcher': 'mpirun',
            'access': ['--partition=cpu', '--exclusive'],
            'max_jobs': 8,
            'time_limit': '10m',
            'processor': _PROCESSOR,
            'features': ['cpu'],
            'extras': {'num_nodes': 64},
        },
    ],
}
