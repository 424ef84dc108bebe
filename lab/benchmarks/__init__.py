"""Speed and memory benchmarks (`python -m lab.benchmarks.<name>`)."""
