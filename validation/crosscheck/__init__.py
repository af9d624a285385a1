"""The parts of validation/torch_crosscheck.py, softfloat's platform models
checked against torch bit for bit: torch I/O, the inputs, the comparison and its
classification of mismatches, one run's state, the elementwise, reduction and
training checks, and the report. The command line and the list of checks are in
validation/torch_crosscheck.py."""
