"""``omb-setup``, one program: find or build MPI + OSU pairs and register them for ReFrame.

``cli`` (the command), ``environs`` (the registry and the ReFrame environments made from it),
``prefix_mpi`` (MPIs installed under a prefix), ``spack_envs`` / ``spack_bootstrap`` /
``spack_build`` (our Spack environments, the pinned Spack, building them), ``progress`` and
``step_failures`` (what each step prints while it runs and when it fails; their data in
``setup/data/``).
"""
