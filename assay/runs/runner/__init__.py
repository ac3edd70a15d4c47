"""A run, assembled and executed: everything it is made of built and checked before
anything is written (`_assemble`), then its declared stages run in order into the run
directory, resumably (`_runner`)."""
