# Cython's shared utility code (memoryview, array, ...) that cythonize generates for the
# compiled modules of sqnopt (setup.py: SHARED_UTILITY); nothing in it is sqnopt's API.
