"""Results pages, tables and the papers' numbers, built on sentzoo's
evaluation library."""
