"""The lab: what writes the docs and the claims, beside the library.

Not installed (the wheel holds sentzoo/ only): page generators, benchmarks,
the records' readers. It imports the library as `sentzoo.x`; the library
never imports it.
"""
