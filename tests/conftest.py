import os

from hypothesis import settings

# Keep the default suite inside CI's budget (2 cores): modest example counts,
# no deadline (the first call of a kernel may compile).
settings.register_profile("default", max_examples=200, deadline=None)
settings.register_profile("thorough", max_examples=5000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
